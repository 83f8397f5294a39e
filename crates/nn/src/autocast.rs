//! bf16 mixed-precision training through libtorch's autocast (Micikevicius
//! et al. 2018, "Mixed Precision Training"; bf16 as in Kalamkar et al. 2019).
//!
//! Inside [`with_bf16_autocast`] libtorch runs convolutions and matrix
//! products in bf16 while the weights, their gradients, the optimiser state
//! and the reductions (softmax, losses) stay fp32. bf16 keeps fp32's exponent
//! range, so unlike fp16 no loss scaling is needed. This is what
//! `torch.autocast(device_type, dtype=torch.bfloat16)` does in Python.
//!
//! Decision: `tch` 0.26 exposes only "autocast on/off for CUDA", whose
//! default type is fp16, and nothing for the CPU. The device-specific calls
//! (`at::autocast::set_autocast_enabled(DeviceType, bool)`,
//! `set_autocast_dtype(DeviceType, ScalarType)` and their getters) are plain
//! exported C++ functions of `libtorch_cpu`, taking two one-byte enums. They
//! are bound here by their mangled names, which the Itanium ABI fixes: a
//! libtorch without them fails at link time, never silently at run time. The
//! unit test checks that a convolution inside the region really runs in bf16.

use std::os::raw::c_int;
use tch::Device;

// c10::DeviceType values (c10/core/DeviceType.h) and c10::ScalarType's
// BFloat16 (c10/core/ScalarType.h; tch's `Kind` keeps its own copy private).
const DEVICE_TYPE_CPU: i8 = 0;
const DEVICE_TYPE_CUDA: i8 = 1;
const SCALAR_TYPE_BF16: i8 = 15;

extern "C" {
    #[link_name = "_ZN2at8autocast20set_autocast_enabledEN3c1010DeviceTypeEb"]
    fn at_set_autocast_enabled(device_type: i8, enabled: bool);
    #[link_name = "_ZN2at8autocast19is_autocast_enabledEN3c1010DeviceTypeE"]
    fn at_is_autocast_enabled(device_type: i8) -> bool;
    #[link_name = "_ZN2at8autocast18set_autocast_dtypeEN3c1010DeviceTypeENS1_10ScalarTypeE"]
    fn at_set_autocast_dtype(device_type: i8, dtype: i8);
    #[link_name = "_ZN2at8autocast18get_autocast_dtypeEN3c1010DeviceTypeE"]
    fn at_get_autocast_dtype(device_type: i8) -> i8;
}

fn device_type(device: Device) -> i8 {
    match device {
        Device::Cuda(_) => DEVICE_TYPE_CUDA,
        _ => DEVICE_TYPE_CPU,
    }
}

/// Restores the autocast state it found, also when the closure panics, and
/// drops autocast's cache of bf16 weight copies when the outermost region
/// ends (the weights change at every optimiser step).
struct Region {
    device_type: i8,
    was_enabled: bool,
    was_dtype: i8,
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: plain setters of thread-local autocast state; the nesting
        // counter was incremented when the region was entered.
        unsafe {
            if torch_sys::at_autocast_decrement_nesting() == 0 {
                torch_sys::at_autocast_clear_cache();
            }
            at_set_autocast_dtype(self.device_type, self.was_dtype);
            at_set_autocast_enabled(self.device_type, self.was_enabled);
        }
    }
}

/// Runs `f` with bf16 autocast enabled for `device`'s type (CPU or CUDA).
/// Autocast state is per thread, like `no_grad`: only this thread's ops are
/// affected. Run the backward pass after the region, as PyTorch advises.
pub fn with_bf16_autocast<T>(device: Device, f: impl FnOnce() -> T) -> T {
    let device_type = device_type(device);
    // SAFETY: getters and setters of thread-local state, see the module doc
    // for how the bindings are checked.
    let region = unsafe {
        let region = Region {
            device_type,
            was_enabled: at_is_autocast_enabled(device_type),
            was_dtype: at_get_autocast_dtype(device_type),
        };
        at_set_autocast_dtype(device_type, SCALAR_TYPE_BF16);
        at_set_autocast_enabled(device_type, true);
        let _: c_int = torch_sys::at_autocast_increment_nesting();
        region
    };
    let out = f();
    drop(region);
    out
}

/// Whether bf16 autocast is on for `device`'s type on this thread.
pub fn bf16_autocast_enabled(device: Device) -> bool {
    let device_type = device_type(device);
    // SAFETY: getters of thread-local state.
    unsafe {
        at_is_autocast_enabled(device_type)
            && at_get_autocast_dtype(device_type) == SCALAR_TYPE_BF16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{Kind, Tensor};

    #[test]
    fn a_convolution_inside_the_region_runs_in_bf16_and_the_state_is_restored() {
        let x = Tensor::randn([2, 3, 7, 7], (Kind::Float, Device::Cpu));
        let w = Tensor::randn([4, 3, 3, 3], (Kind::Float, Device::Cpu));
        let conv = || x.conv2d(&w, None::<Tensor>, [1, 1], [1, 1], [1, 1], 1);
        assert_eq!(conv().kind(), Kind::Float);
        assert!(!bf16_autocast_enabled(Device::Cpu));
        let (inside, nested) = with_bf16_autocast(Device::Cpu, || {
            let nested = with_bf16_autocast(Device::Cpu, || conv().kind());
            // The inner region's end must not switch the outer one off.
            (conv().kind(), nested)
        });
        assert_eq!(inside, Kind::BFloat16);
        assert_eq!(nested, Kind::BFloat16);
        assert!(!bf16_autocast_enabled(Device::Cpu));
        assert_eq!(conv().kind(), Kind::Float);
    }

    #[test]
    fn the_state_is_restored_when_the_closure_panics() {
        let result = std::panic::catch_unwind(|| {
            with_bf16_autocast(Device::Cpu, || panic!("inside the region"));
        });
        assert!(result.is_err());
        assert!(!bf16_autocast_enabled(Device::Cpu));
    }
}

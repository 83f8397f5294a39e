//! Flush-to-zero for subnormal floats on the threads that run the network.
//!
//! Trained networks hold subnormal numbers (|x| < 1.2e-38): weights of
//! channels that ReLU has switched off decay towards zero under L2, and
//! Adam's first moments of parameters whose gradient is zero shrink by beta1
//! every step. x86 CPUs handle a subnormal operand in microcode, a hundred
//! times slower than a normal one. Measured here on a `ship-1` checkpoint
//! (generation 2, 4,429 subnormals among 273,433 floats): one of its 3x3
//! convolutions, forward and backward on 256 positions, took 114 ms instead
//! of 9 ms; `bench-net --ckpt` trained on its state at 273 samples/s instead
//! of 1,530; and a whole training stage of the run went 1.4 times faster
//! with the flags (`experiments/README.md`).
//!
//! The fix is the CPU's own: MXCSR's flush-to-zero (FTZ: subnormal results
//! become 0) and denormals-are-zero (DAZ: subnormal inputs read as 0), what
//! `torch.set_flush_denormal(True)` sets in Python. Values that small carry
//! nothing a network or an optimiser can use. The flags are per thread and a
//! new thread inherits its creator's, so the program sets them first thing
//! in `main`, and [`crate::set_threads`] sets them on every thread that
//! calls it: the inference threads, which the library creates, and the
//! program's stage threads. The library sets them on no other thread, so a
//! caller's own floating point (a Python process's NumPy, through the
//! Python package) is left as it was.

/// Sets flush-to-zero and denormals-are-zero on the calling thread, and so
/// on the threads it creates from now on. A no-op on CPUs other than x86-64
/// and AArch64.
pub fn flush_denormals() {
    set_flush_denormals(true);
}

/// Sets or clears the flags on the calling thread (`bench-net` clears them
/// to measure what they save).
pub fn set_flush_denormals(on: bool) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: reads and writes the calling thread's MXCSR; FTZ (bit 15) and
    // DAZ (bit 6) change only how subnormal floats are rounded and read.
    unsafe {
        const FLAGS: u32 = (1 << 15) | (1 << 6);
        let mut csr: u32 = 0;
        std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack));
        csr = if on { csr | FLAGS } else { csr & !FLAGS };
        std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack, readonly));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: sets or clears FPCR.FZ (bit 24), flush-to-zero, on the calling thread.
    unsafe {
        let mut fpcr: u64;
        std::arch::asm!("mrs {}, fpcr", out(reg) fpcr, options(nomem, nostack));
        fpcr = if on {
            fpcr | 1 << 24
        } else {
            fpcr & !(1 << 24)
        };
        std::arch::asm!("msr fpcr, {}", in(reg) fpcr, options(nomem, nostack));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = on;
}

/// Whether subnormal floats are flushed on the calling thread.
pub fn denormals_flushed() -> bool {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: reads the calling thread's MXCSR.
    unsafe {
        let mut csr: u32 = 0;
        std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack));
        csr & ((1 << 15) | (1 << 6)) == (1 << 15) | (1 << 6)
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: reads FPCR.
    unsafe {
        let fpcr: u64;
        std::arch::asm!("mrs {}, fpcr", out(reg) fpcr, options(nomem, nostack));
        fpcr & (1 << 24) != 0
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subnormal_results_and_inputs_become_zero_on_this_thread_and_its_children() {
        std::thread::spawn(|| {
            let tiny = std::hint::black_box(1e-39f32);
            assert!(tiny > 0.0 && !tiny.is_normal(), "a subnormal to start with");
            assert!(!denormals_flushed());
            flush_denormals();
            assert!(denormals_flushed());
            // DAZ: the subnormal reads as zero; FTZ: a product that would be
            // subnormal is zero.
            assert_eq!(std::hint::black_box(tiny) * 1.0, 0.0);
            let small = std::hint::black_box(1e-20f32);
            assert_eq!(small * std::hint::black_box(1e-20f32), 0.0);
            // A thread created now inherits the flags.
            let child = std::thread::spawn(denormals_flushed).join().unwrap();
            assert!(child, "a new thread inherits flush-to-zero");
            set_flush_denormals(false);
            assert!(!denormals_flushed());
            assert!(std::hint::black_box(tiny) * 1.0 > 0.0);
        })
        .join()
        .unwrap();
    }
}

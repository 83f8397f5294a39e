use anyhow::{bail, Context, Result};
use clap::Args;
use halatafl_train::{Run, RunConfig};
use std::path::{Path, PathBuf};

/// Train an agent by self-play from a config: generations of self-play ->
/// training -> evaluation, in a run directory that holds everything needed to
/// analyse, resume and reproduce the run.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Run config (TOML), e.g. configs/quick.toml.
    #[arg(long, conflicts_with = "resume", required_unless_present = "resume")]
    pub config: Option<PathBuf>,
    /// Run directory; default experiments/<config name> (or -2, -3, ... if taken).
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// Carry on an interrupted run from its directory.
    #[arg(long, value_name = "RUN_DIR")]
    pub resume: Option<PathBuf>,
    /// Generations to train, overriding `[run] generations`. With --config
    /// the new run's config.toml records this count; with --resume the run
    /// goes to this many generations instead of its count, e.g. to train a
    /// finished run longer (the learning-rate schedule is recomputed over the
    /// new count, recorded in run.json and the log).
    #[arg(long, value_name = "N")]
    pub generations: Option<u32>,
    /// Make the run and its generation 0 (the expert's games, the first
    /// checkpoint and its evaluation), then stop: the run is then driven by
    /// `halatafl stage selfplay`, `learn` and `evaluate` processes (the
    /// asynchronous mode). With --resume, finishes an interrupted --init-only.
    #[arg(long)]
    pub init_only: bool,
}

fn free_run_dir(stem: &str) -> PathBuf {
    let base = Path::new("experiments");
    let first = base.join(stem);
    if !first.exists() {
        return first;
    }
    (2..)
        .map(|i| base.join(format!("{stem}-{i}")))
        .find(|p| !p.exists())
        .expect("some name is free")
}

/// Bad agent specs in the config fail before the run directory is made.
fn check_agent_specs(config: &RunConfig, path: &Path) -> Result<()> {
    let variant = config.variant().map_err(anyhow::Error::msg)?;
    if config.bootstrap.enabled() {
        crate::agents::build_agent(&config.bootstrap.agent, 0, variant)
            .with_context(|| format!("{}: bootstrap.agent", path.display()))?;
    }
    if config.selfplay.has_opponent() {
        crate::agents::build_agent(&config.selfplay.opponent, 0, variant)
            .with_context(|| format!("{}: selfplay.opponent", path.display()))?;
    }
    if !config.network.init.is_empty() {
        // Loaded whole (shape, checksum, values) and its variant compared,
        // so a bad checkpoint is refused before the run directory exists.
        let init = Path::new(&config.network.init);
        let expected = config.net_config().map_err(anyhow::Error::msg)?;
        let (_, info) = halatafl_nn::checkpoint::load(init, Some(expected), tch::Device::Cpu)
            .with_context(|| format!("{}: network.init", path.display()))?;
        let trained = halatafl_nn::agent::trained_variant(&info);
        halatafl_nn::agent::check_trained_variant(&init.display().to_string(), trained, variant)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("{}: network.init", path.display()))?;
    }
    for spec in &config.eval.opponents {
        // Network opponents load their checkpoint when the evaluation starts.
        let net_kind = halatafl_nn::agent::network_kind(spec) == Some("net");
        if spec != "previous" && !net_kind {
            crate::agents::build_agent(spec, 0, variant)
                .with_context(|| format!("{}: eval.opponents", path.display()))?;
        }
    }
    Ok(())
}

/// What the agent factory gives for one spec: the agent, or why the spec
/// names none.
type BuiltAgent = std::result::Result<Box<dyn halatafl_agent::Agent>, halatafl_agent::SpecError>;

/// Builds the run's non-network agents (the expert, evaluation opponents).
pub fn base_factory(run: &Run) -> Result<impl Fn(&str, u64) -> BuiltAgent + Sync> {
    let variant = run.config.variant()?;
    Ok(move |spec: &str, seed: u64| crate::agents::build_agent(spec, seed, variant))
}

/// The lock `train` holds on a run for its whole life: a second `train`
/// on the same run (a `--resume` while the first still runs) is refused
/// instead of writing the same rows and checkpoints twice.
fn lock_run(run: &Run) -> Result<std::fs::File> {
    Ok(run.exclusive("train", "`halatafl train`")?)
}

pub fn run(args: TrainArgs) -> Result<()> {
    let (run, _lock) = match (&args.resume, &args.config) {
        (Some(dir), _) => {
            let mut run = Run::open(dir).context("cannot resume")?;
            let lock = lock_run(&run)?;
            // Everything that refuses the resume runs before anything is
            // written to the run, its log included.
            run.check_resumable(args.init_only)
                .context("cannot resume")?;
            if let Some(n) = args.generations {
                let command: Vec<String> = std::env::args().collect();
                run.set_generations(n, &command.join(" "))?;
            }
            match run.progress()? {
                Some(p) => run.log(&format!(
                    "resuming {} after generation {} stage {:?}",
                    dir.display(),
                    p.generation,
                    p.stage
                )),
                None => run.log(&format!("resuming {} from its start", dir.display())),
            }
            (run, lock)
        }
        (None, Some(config_path)) => {
            let mut config = RunConfig::load(config_path).map_err(anyhow::Error::msg)?;
            if let Some(n) = args.generations {
                config.run.generations = n;
                config
                    .validate()
                    .with_context(|| format!("{}: --generations {n}", config_path.display()))?;
            }
            check_agent_specs(&config, config_path)?;
            let dir = match &args.run {
                Some(d) => d.clone(),
                None => free_run_dir(
                    &config_path
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_else(|| "run".into()),
                ),
            };
            let command: Vec<String> = std::env::args().collect();
            let run = Run::create(&dir, config, &command.join(" "))?;
            let lock = lock_run(&run)?;
            run.log(&format!(
                "new run in {} from {}{}",
                dir.display(),
                config_path.display(),
                match args.generations {
                    Some(n) => format!(" with --generations {n}"),
                    None => String::new(),
                }
            ));
            (run, lock)
        }
        (None, None) => bail!("give --config FILE or --resume RUN_DIR"),
    };
    let factory = base_factory(&run)?;
    if args.init_only {
        run.init_async(&factory)?;
        print!("{}", run.final_report()?);
        println!("run: {}", run.dir.display());
        let dir = run.dir.display();
        println!(
            "next: halatafl stage selfplay --run {dir} --worker 0 (one per worker id), \
             halatafl stage learn --run {dir}, halatafl stage evaluate --run {dir}"
        );
        return Ok(());
    }
    run.execute(&factory)?;
    finish(&run)
}

/// The end of a finished run: its report written (the plots are there
/// without another command), then the scoreboard and where things are.
/// Opens a run for one asynchronous stage (`selfplay`, `learn`,
/// `evaluate`), with `--device` replacing `[run] device` for this process
/// only: the learner on `cuda` while workers play on `cpu`, or the reverse.
/// The run's config.toml is not changed.
pub fn open_stage_run(dir: &std::path::Path, device: Option<&str>) -> Result<Run> {
    if let Some(device) = device {
        halatafl_nn::parse_device(device).context("--device")?;
    }
    let mut run = Run::open(dir).context("cannot open the run")?;
    if let Some(device) = device {
        run.config.run.device = device.to_string();
    }
    Ok(run)
}

pub fn finish(run: &Run) -> Result<()> {
    let report = halatafl_report::write_report(&run.dir, None)
        .with_context(|| format!("writing the report of {}", run.dir.display()))?;
    print!("{}", run.final_report()?);
    println!("run: {}", run.dir.display());
    if let Some(md) = report
        .files
        .iter()
        .find(|f| f.extension().is_some_and(|e| e == "md"))
    {
        println!(
            "report: {} (plots beside it; `halatafl report` redraws them)",
            md.display()
        );
    }
    Ok(())
}

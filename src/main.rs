use std::{net::SocketAddr, process::ExitCode};

use clap::{Parser, Subcommand};
use leadtrail::{
    config::{Config, LogFormat},
    db, seed,
    state::AppState,
};
use tracing_subscriber::EnvFilter;

// The hot paths allocate many small, short-lived objects per request.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Leadtrail: self-hosted web-visitor analytics and lead intelligence.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    config: Config,
}

#[derive(Subcommand)]
enum Command {
    /// Run migrations, then serve HTTP (the default).
    Serve,
    /// Run pending database migrations and exit.
    Migrate,
    /// Fill a site with synthetic traffic, for demos and benchmarks.
    Seed(SeedArgs),
}

#[derive(clap::Args)]
struct SeedArgs {
    /// The site to fill (its id).
    #[arg(long, required_unless_present = "demo")]
    site: Option<i64>,
    /// Create (or refresh) a demo account, print its sign-in, and fill its
    /// site with a week of traffic.
    #[arg(long, conflicts_with = "site")]
    demo: bool,
    /// Visitors to generate; each makes about 8 events.
    #[arg(long, default_value_t = 1000)]
    visitors: usize,
    /// Spread the traffic over this many days before now.
    #[arg(long, default_value_t = 30)]
    days: i64,
    /// Random seed; the same seed makes the same traffic.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.config.log_format);
    let result = match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(cli.config).await,
        Command::Migrate => migrate(&cli.config).await,
        Command::Seed(args) => seed(&cli.config, args).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{err}");
            eprintln!("leadtrail: {err}");
            ExitCode::FAILURE
        }
    }
}

fn init_logging(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,sea_orm=warn,sea_orm_migration=warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

async fn migrate(config: &Config) -> Result<(), BoxError> {
    let db = db::connect(config).await?;
    db::migrate(&db).await?;
    tracing::info!("migrations are up to date");
    Ok(())
}

async fn seed(config: &Config, args: SeedArgs) -> Result<(), BoxError> {
    let db = db::connect(config).await?;
    db::migrate(&db).await?;
    let bar = indicatif::ProgressBar::new(args.visitors as u64)
        .with_style(indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} visitors, {per_sec}, eta {eta}")?);
    let (site_id, days) = match args.site {
        Some(site) => (site, args.days),
        None => {
            let demo = seed::demo_account(&db, config.max_sites_per_account).await.map_err(|err| err.message)?;
            println!("Demo account: {}  password: {}  (site {})", demo.email, demo.password, demo.site_id);
            println!(
                "Sign in at {}/api/auth/sign-in/email or explore {}/graphql",
                config.base_url(),
                config.base_url()
            );
            (demo.site_id, 7)
        }
    };
    let options = seed::SeedOptions { site_id, visitors: args.visitors, days, seed: args.seed };
    let started = std::time::Instant::now();
    let report = seed::run(&db, options, |done| bar.inc(done)).await.map_err(|err| err.message)?;
    bar.finish();
    println!(
        "Seeded site {} in {:.1}s: {} visitors ({} bots), {} sessions, {} events, {} link clicks, {} identified.",
        site_id,
        started.elapsed().as_secs_f64(),
        report.visitors,
        report.bots,
        report.sessions,
        report.events,
        report.clicks,
        report.identified
    );
    Ok(())
}

async fn serve(config: Config) -> Result<(), BoxError> {
    let db = db::connect(&config).await?;
    db::migrate(&db).await?;
    let addr = SocketAddr::new(config.host, config.port);
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|err| format!("cannot listen on {addr}: {err}"))?;
    let base = config.base_url();
    let state = AppState::new(db, config)?;
    tracing::info!(%addr, "Leadtrail is listening");
    println!("Leadtrail is listening on http://{addr}");
    println!("  REST API:        {base}/api  (sign up: POST {base}/api/auth/sign-up/email)");
    println!("  GraphQL:         {base}/graphql  (explorer in the browser, subscriptions at /graphql/ws)");
    println!("  Health, metrics: {base}/health/ready, {base}/metrics");
    println!("  Tracker:         <script defer src=\"{base}/script.js\" data-site-id=\"SITE_ID\"></script>");
    println!("  Docs:            README.md");
    leadtrail::serve(listener, state, shutdown_signal()).await?;
    tracing::info!("shut down cleanly");
    Ok(())
}

/// Resolves on SIGINT (Ctrl+C) or SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        if let Err(err) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %err, "cannot listen for Ctrl+C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(err) => {
                tracing::error!(error = %err, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}

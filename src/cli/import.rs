//! `retrysim import`: a configuration file mapped onto a layer, printed as TOML with
//! the line each key came from; and the import warnings `run`, `check` and `explain`
//! print, which `--deny-unmodelled` turns into errors.

use std::path::PathBuf;

use crate::error::exit;
use crate::scenario::import::{self, Selector};
use crate::scenario::Loaded;
use anyhow::Result;

use super::color::{self, Paint};

/// `retrysim import FILE --format F [--service S] [--method M] [--route R | --path P]
/// [--virtual-host V] [--virtual-service V] [--service-profile P] [--instance I]
/// [--profile P]`.
#[derive(Debug, clap::Args)]
pub(crate) struct ImportArgs {
    /// The configuration file (a gRPC service config, JSON; an Envoy route
    /// configuration, listener or bootstrap, an Istio VirtualService, a Linkerd
    /// ServiceProfile or a Spring Boot application.yml, YAML or JSON; an AWS shared
    /// config file).
    pub file: PathBuf,
    /// Its format: `grpc_service_config`, `envoy`, `istio`, `linkerd`, `resilience4j`
    /// or `aws_config`.
    #[arg(long, value_name = "FORMAT")]
    pub format: String,
    /// grpc_service_config: the full service name (`pkg.Service`); without it, only
    /// the default method config matches.
    #[arg(long, value_name = "SERVICE")]
    pub service: Option<String>,
    /// grpc_service_config: the method; without it, the service's entry or the
    /// default matches.
    #[arg(long, value_name = "METHOD", requires = "service")]
    pub method: Option<String>,
    /// envoy: the route's `name` (`virtual_hosts[].routes[].name`); istio: the HTTP
    /// route's `name` or place (`http[1]`); linkerd: the route's `name`.
    #[arg(long, value_name = "ROUTE")]
    pub route: Option<String>,
    /// envoy: the virtual host's `name`, when route names repeat.
    #[arg(long, value_name = "VIRTUAL_HOST")]
    pub virtual_host: Option<String>,
    /// envoy: a request path (`/pkg.Svc/Method`): the first route that matches it, as
    /// Envoy matches, for routes without names.
    #[arg(long, value_name = "PATH", conflicts_with = "route")]
    pub path: Option<String>,
    /// envoy: a request's host (`api.example.com`): the virtual host Envoy picks for it
    /// by its `domains`.
    #[arg(long, value_name = "HOST", conflicts_with = "virtual_host")]
    pub authority: Option<String>,
    /// istio: the VirtualService's `metadata.name`, when the file holds several.
    #[arg(long, value_name = "NAME")]
    pub virtual_service: Option<String>,
    /// linkerd: the ServiceProfile's `metadata.name`, when the file holds several.
    #[arg(long, value_name = "NAME")]
    pub service_profile: Option<String>,
    /// resilience4j: the instance's name (`resilience4j.retry.instances.<name>`, and
    /// the circuit breaker of the same name).
    #[arg(long, value_name = "INSTANCE")]
    pub instance: Option<String>,
    /// aws_config: the profile (`[profile NAME]`); without it, `default`.
    #[arg(long, value_name = "PROFILE")]
    pub profile: Option<String>,
    /// Print only the layer: no header, no warnings on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Prints the layer the file maps to.
/// The formats and what each reads, then the examples: `retrysim import --help`.
pub(crate) fn formats_help() -> String {
    let mut s = String::from("Formats:\n");
    for f in import::FORMATS {
        s.push_str(&format!("  {}: {}\n", f.name, f.about));
    }
    s + "\nExamples:\n  retrysim import service_config.json --format grpc_service_config --service helloworld.Greeter --method SayHello"
}

pub(crate) fn import(args: ImportArgs) -> Result<i32> {
    let mut selector = Selector::new();
    if let Some(s) = args.service {
        selector.insert("service".into(), s);
    }
    if let Some(m) = args.method {
        selector.insert("method".into(), m);
    }
    if let Some(r) = args.route {
        selector.insert("route".into(), r);
    }
    if let Some(v) = args.virtual_host {
        selector.insert("virtual_host".into(), v);
    }
    if let Some(p) = args.path {
        selector.insert("path".into(), p);
    }
    if let Some(a) = args.authority {
        selector.insert("authority".into(), a);
    }
    if let Some(v) = args.virtual_service {
        selector.insert("virtual_service".into(), v);
    }
    if let Some(p) = args.service_profile {
        selector.insert("service_profile".into(), p);
    }
    if let Some(i) = args.instance {
        selector.insert("instance".into(), i);
    }
    if let Some(p) = args.profile {
        selector.insert("profile".into(), p);
    }
    let mapped = import::import_file(&args.file, &args.format, &selector)?;
    let shown = args.file.display().to_string();
    if !args.quiet {
        println!(
            "# [[fleets.layers]] imported from {shown} ({}, {}); the same as\n# import = {{ format = {}, file = {}{} }}",
            args.format,
            mapped.matched,
            toml::Value::from(args.format.as_str()),
            toml::Value::from(shown.as_str()),
            selector
                .iter()
                .map(|(k, v)| format!(", {k} = {}", toml::Value::from(v.as_str())))
                .collect::<String>()
        );
    }
    print!("{}", import::render(&mapped, &shown));
    Ok(exit::OK)
}

/// Prints the import warnings of a loaded scenario on stderr (unless `quiet`); with
/// `deny`, the unmodelled ones are errors instead: the exit code for bad input.
pub(crate) fn warn(loaded: &Loaded, quiet: bool, deny: bool) -> Option<i32> {
    if deny {
        let denied = loaded.import_warnings(true);
        if !denied.is_empty() {
            for w in &denied {
                eprintln!(
                    "{} {w} (--deny-unmodelled)",
                    color::err("error:", Paint::Red)
                );
            }
            return Some(exit::BAD_INPUT);
        }
    }
    if !quiet {
        for w in loaded.import_warnings(false) {
            eprintln!("warning: {w}");
        }
    }
    None
}

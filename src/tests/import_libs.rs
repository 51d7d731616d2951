//! Layers imported from library configuration files: Resilience4j's Spring Boot
//! `application.yml` (`resilience4j`) and the AWS shared config file (`aws_config`).
//! The upstream examples give exactly the layer written by hand (the same model, the
//! same output bytes); each absent field takes the library's default; inheritance
//! (`configs.default`, `baseConfig`) follows Resilience4j 2.4.0; refusals name the
//! file, the line and the field.

use std::path::Path;

use crate::scenario::import::{aws_config, resilience4j, Selector};

use crate::tests::common::retrysim;

use crate::tests::import_support::{
    error, fixture, folder, loaded, model, same_as_by_hand, scenario,
};

/// `imported.toml` and `by_hand.toml` in `dir` are the same model.
fn same_model(dir: &Path) {
    assert_eq!(
        model(&loaded(dir, "imported.toml")),
        model(&loaded(dir, "by_hand.toml"))
    );
}

fn sel(key: &str, value: &str) -> Selector {
    let mut s = Selector::new();
    s.insert(key.into(), value.into());
    s
}

/// The layer a Spring Boot file gives for instance `a`.
fn r4j(text: &str) -> toml::Table {
    resilience4j::map(text, &sel("instance", "a"))
        .unwrap_or_else(|e| panic!("{}", e.render()))
        .table()
}

/// The refusal of a Spring Boot file for instance `a`.
fn r4j_err(text: &str) -> String {
    match resilience4j::map(text, &sel("instance", "a")) {
        Ok(m) => panic!("maps: {:?}", m.table()),
        Err(e) => e.render(),
    }
}

fn key<'a>(t: &'a toml::Table, dotted: &str) -> Option<&'a toml::Value> {
    let mut at = t;
    let mut parts = dotted.split('.').peekable();
    while let Some(p) = parts.next() {
        let v = at.get(p)?;
        if parts.peek().is_none() {
            return Some(v);
        }
        at = v.as_table()?;
    }
    None
}

const DEMO_BACKEND_A: &str = "max_attempts = 3\nretry_on = ['rejected', 'error', 'timeout']\nrespect_retry_after = false\n\
     backoff = { kind = 'resilience4j', initial = '100ms' }\n\
     breaker = { kind = 'resilience4j', window_type = 'count', window_size = 10, min_calls = 5, failure_rate = 50, slow_call_rate = 100, slow_call_duration = '60s', open_for = '5s', half_open_calls = 3, placement = 'inside' }";

#[test]
fn resilience4js_spring_boot_demo_gives_the_layer_written_by_hand() {
    let d = folder(&[
        ("application.yml", &fixture("resilience4j_demo_application.yml")),
        (
            "imported.toml",
            &scenario("import = { format = 'resilience4j', file = 'application.yml', instance = 'backendA' }"),
        ),
        ("by_hand.toml", &scenario(DEMO_BACKEND_A)),
    ]);
    same_as_by_hand(d.path());
    // What the demo sets that retrysim cannot model is said, with its line.
    let w = loaded(d.path(), "imported.toml").import_warnings(true);
    for want in [
        "'application.yml' line 70, resilience4j.retry.configs.default.retryExceptions: not modelled",
        "'application.yml' line 38, resilience4j.circuitbreaker.configs.default.recordExceptions: not modelled",
        "'application.yml' line 128, resilience4j.timelimiter.instances.backendA: not imported",
    ] {
        assert!(w.iter().any(|x| x.contains(want)), "{want}: {w:?}");
    }
    // backendB's breaker: its own keys over configs.default (no baseConfig).
    let m = resilience4j::map(
        &fixture("resilience4j_demo_application.yml"),
        &sel("instance", "backendB"),
    )
    .unwrap();
    let t = m.table();
    assert_eq!(key(&t, "breaker.min_calls").unwrap().as_integer(), Some(10));
    assert_eq!(key(&t, "breaker.open_for").unwrap().as_str(), Some("5s"));
    assert_eq!(
        key(&t, "breaker.half_open_calls").unwrap().as_integer(),
        Some(3)
    );
    assert!(m
        .warnings
        .iter()
        .any(|w| w.line == 63 && w.setting.ends_with("backendB.recordFailurePredicate")));
}

/// An instance of both, written as `body` (YAML lines under the instance, indented 8).
fn both(retry: &str, cb: &str) -> String {
    format!(
        "resilience4j:\n  retry:\n    instances:\n      a:\n{retry}  circuitbreaker:\n    instances:\n      a:\n{cb}"
    )
}

#[test]
fn an_instance_of_library_defaults_is_the_resilience4j_preset() {
    let d = folder(&[
        ("application.yml", &both("", "")),
        (
            "imported.toml",
            &scenario(
                "import = { format = 'resilience4j', file = 'application.yml', instance = 'a' }",
            ),
        ),
        ("by_hand.toml", &scenario("preset = 'resilience4j'")),
    ]);
    same_model(d.path());
    assert!(loaded(d.path(), "imported.toml")
        .import_warnings(false)
        .is_empty());
}

#[test]
fn absent_fields_take_resilience4js_defaults_one_by_one() {
    // Every field set, none to its default; then each left out in turn.
    let retry = [
        (
            "        maxAttempts: 7\n",
            "max_attempts",
            toml::Value::from(3),
        ),
        (
            "        waitDuration: 2s\n",
            "backoff.initial",
            "500ms".into(),
        ),
    ];
    let cb = [
        (
            "        failureRateThreshold: 20\n",
            "breaker.failure_rate",
            toml::Value::from(50),
        ),
        (
            "        slidingWindowType: TIME_BASED\n",
            "breaker.window_type",
            "count".into(),
        ),
        (
            "        slidingWindowSize: 30\n",
            "breaker.window_size",
            100.into(),
        ),
        (
            "        minimumNumberOfCalls: 7\n",
            "breaker.min_calls",
            100.into(),
        ),
        (
            "        waitDurationInOpenState: 9s\n",
            "breaker.open_for",
            "60s".into(),
        ),
        (
            "        permittedNumberOfCallsInHalfOpenState: 2\n",
            "breaker.half_open_calls",
            10.into(),
        ),
        (
            "        slowCallRateThreshold: 80\n",
            "breaker.slow_call_rate",
            100.into(),
        ),
        (
            "        slowCallDurationThreshold: 3s\n",
            "breaker.slow_call_duration",
            "60s".into(),
        ),
    ];
    let all_retry: String = retry.iter().map(|(l, _, _)| *l).collect();
    let all_cb: String = cb.iter().map(|(l, _, _)| *l).collect();
    let full = r4j(&both(&all_retry, &all_cb));
    for (line, k, default) in retry.iter().chain(cb.iter()) {
        assert_ne!(key(&full, k), Some(default), "{k} is set in full");
        let t = r4j(&both(
            &all_retry.replace(line, ""),
            &all_cb.replace(line, ""),
        ));
        assert_eq!(key(&t, k), Some(default), "{k} without {line}");
    }
    // No exponential backoff unless enabled; enabled, the multiplier defaults to 1.5
    // and randomized waits to a factor of 0.5.
    assert!(key(&full, "backoff.multiplier").is_none());
    let t = r4j(&both(
        "        waitDuration: 100ms\n        enableExponentialBackoff: true\n",
        "",
    ));
    assert_eq!(key(&t, "backoff.multiplier").unwrap().as_float(), Some(1.5));
    assert!(key(&t, "backoff.randomization_factor").is_none());
    let t = r4j(&both(
        "        waitDuration: 100ms\n        enableRandomizedWait: true\n",
        "",
    ));
    assert_eq!(
        key(&t, "backoff.randomization_factor").unwrap().as_float(),
        Some(0.5)
    );
    assert!(key(&t, "backoff.multiplier").is_none());
    // Both, with everything: IntervalFunction.ofExponentialRandomBackoff(w, m, f, max).
    let t = r4j(&both(
        "        waitDuration: PT0.2S\n        enableExponentialBackoff: true\n        exponentialBackoffMultiplier: 3\n        enableRandomizedWait: yes\n        randomizedWaitFactor: 0.25\n        exponentialMaxWaitDuration: 5000\n",
        "",
    ));
    assert_eq!(key(&t, "backoff.initial").unwrap().as_str(), Some("200ms"));
    assert_eq!(key(&t, "backoff.multiplier").unwrap().as_integer(), Some(3));
    assert_eq!(
        key(&t, "backoff.randomization_factor").unwrap().as_float(),
        Some(0.25)
    );
    assert_eq!(
        key(&t, "backoff.max_interval").unwrap().as_str(),
        Some("5s")
    );
    // A wait of 0 is no backoff (RetryConfig.Builder.waitDuration takes 0).
    let t = r4j(&both("        waitDuration: 0\n", ""));
    assert_eq!(key(&t, "backoff.kind").unwrap().as_str(), Some("none"));
    assert!(key(&t, "backoff.initial").is_none());
    // Without a breaker instance of the name, the layer has no breaker; without a
    // retry instance, it does not retry.
    let t = r4j("resilience4j.retry.instances.a.maxAttempts: 2\n");
    assert!(t.get("breaker").is_none());
    let t = r4j("resilience4j.circuitbreaker.instances.a.slidingWindowSize: 5\n");
    assert_eq!(t["max_attempts"].as_integer(), Some(1));
    assert_eq!(
        key(&t, "breaker.window_size").unwrap().as_integer(),
        Some(5)
    );
}

#[test]
fn configs_default_and_base_config_are_inherited_as_resilience4j_does() {
    let text = "resilience4j.retry:\n\
                \x20 configs:\n\
                \x20   default:\n\
                \x20     maxAttempts: 5\n\
                \x20     waitDuration: 1s\n\
                \x20     enableExponentialBackoff: true\n\
                \x20     exponentialBackoffMultiplier: 2\n\
                \x20     randomizedWaitFactor: 0.2\n\
                \x20   shared:\n\
                \x20     waitDuration: 300ms\n\
                \x20 instances:\n\
                \x20   a:\n\
                \x20     waitDuration: 50ms\n\
                \x20   b:\n\
                \x20     baseConfig: shared\n\
                \x20   c:\n\
                \x20     baseConfig: shared\n\
                \x20     maxAttempts: 0\n\
                resilience4j.circuitbreaker:\n\
                \x20 configs:\n\
                \x20   default:\n\
                \x20     slidingWindowSize: 20\n\
                \x20     failureRateThreshold: 25\n\
                \x20   shared:\n\
                \x20     minimumNumberOfCalls: 4\n\
                \x20   b:\n\
                \x20     minimumNumberOfCalls: 6\n\
                \x20 instances:\n\
                \x20   a:\n\
                \x20     minimumNumberOfCalls: 8\n\
                \x20   b:\n\
                \x20     waitDurationInOpenState: 2s\n\
                \x20   c:\n\
                \x20     baseConfig: shared\n";
    let layer = |name: &str| {
        resilience4j::map(text, &sel("instance", name))
            .unwrap_or_else(|e| panic!("{}", e.render()))
            .table()
    };
    // a: configs.default below its own keys; the default's exponential switches are
    // merged into it, its randomizedWaitFactor is not (ConfigUtils.mergePropertiesIfAny).
    let a = layer("a");
    assert_eq!(a["max_attempts"].as_integer(), Some(5));
    assert_eq!(key(&a, "backoff.initial").unwrap().as_str(), Some("50ms"));
    assert_eq!(key(&a, "backoff.multiplier").unwrap().as_integer(), Some(2));
    assert!(key(&a, "backoff.randomization_factor").is_none());
    assert_eq!(
        key(&a, "breaker.window_size").unwrap().as_integer(),
        Some(20)
    );
    assert_eq!(
        key(&a, "breaker.failure_rate").unwrap().as_integer(),
        Some(25)
    );
    assert_eq!(key(&a, "breaker.min_calls").unwrap().as_integer(), Some(8));
    // b: retry's `shared` config inherits configs.default (retry configs do) and sets
    // its own wait, which is exponential by the default's merged switches.
    let b = layer("b");
    assert_eq!(b["max_attempts"].as_integer(), Some(5));
    assert_eq!(key(&b, "backoff.initial").unwrap().as_str(), Some("300ms"));
    assert_eq!(key(&b, "backoff.multiplier").unwrap().as_integer(), Some(2));
    // b's breaker: the config named as the instance, on the library's defaults (not on
    // configs.default), then its own keys.
    assert_eq!(key(&b, "breaker.min_calls").unwrap().as_integer(), Some(6));
    assert_eq!(
        key(&b, "breaker.window_size").unwrap().as_integer(),
        Some(100)
    );
    assert_eq!(key(&b, "breaker.open_for").unwrap().as_str(), Some("2s"));
    // c: maxAttempts 0 keeps the base's; the breaker's `shared` config does not
    // inherit configs.default.
    let c = layer("c");
    assert_eq!(c["max_attempts"].as_integer(), Some(5));
    assert_eq!(key(&c, "breaker.min_calls").unwrap().as_integer(), Some(4));
    assert_eq!(
        key(&c, "breaker.window_size").unwrap().as_integer(),
        Some(100)
    );
    assert_eq!(
        key(&c, "breaker.failure_rate").unwrap().as_integer(),
        Some(50)
    );
}

#[test]
fn a_properties_file_is_the_same_layer_as_its_yaml() {
    let yaml = both(
        "        max-attempts: 4\n        wait_duration: 250ms\n        ignoreExceptions:\n          - io.github.resilience4j.circuitbreaker.CallNotPermittedException\n",
        "        slidingWindowSize: 12\n",
    );
    let props = "# application.properties\n\
                 resilience4j.retry.instances.a.maxAttempts=4\n\
                 resilience4j.retry.instances.a.waitDuration = 250ms\n\
                 resilience4j.retry.instances.a.ignoreExceptions[0]=io.github.resilience4j.circuitbreaker.CallNotPermittedException\n\
                 resilience4j.circuitbreaker.instances.a.sliding-window-size=12\n";
    let (y, p) = (r4j(&yaml), r4j(props));
    assert_eq!(y, p);
    // CallNotPermittedException ignored: an open breaker is not retried.
    let on: Vec<&str> = y["retry_on"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(on, ["rejected", "error", "timeout"]);
    // RuntimeException stands for more than CallNotPermittedException: said.
    let m = resilience4j::map(
        &both("        ignoreExceptions: java.lang.RuntimeException\n", ""),
        &sel("instance", "a"),
    )
    .unwrap();
    assert!(!m.table()["retry_on"]
        .as_array()
        .unwrap()
        .contains(&"breaker_open".into()));
    assert_eq!(m.warnings.len(), 1, "{:?}", m.warnings);
    assert!(m.warnings[0].message.contains("java.lang.RuntimeException"));
    let m = resilience4j::map(props, &sel("instance", "a")).unwrap();
    let (_, _, prov) = m
        .keys
        .iter()
        .find(|(k, _, _)| k == "backoff.initial")
        .unwrap();
    assert_eq!(prov.line, 3);
}

#[test]
fn each_bad_resilience4j_file_is_refused_with_its_file_line_and_field() {
    for (text, want) in [
        (
            both("        maxAttempts: 2\n", ""),
            "",
        ),
        (
            "resilience4j.retry.instances.b.maxAttempts: 2\n".to_string(),
            "resilience4j.retry.instances: has no instance named \"a\", nor has resilience4j.circuitbreaker.instances (retry instances: \"b\"; circuit breaker instances: none)",
        ),
        (
            both("        waitDuration: 1.5s\n", ""),
            "line 5, resilience4j.retry.instances.a.waitDuration: is not a duration Spring Boot reads (found \"1.5s\"",
        ),
        (
            both("", "        waitDurationInOpenState: 10 s\n"),
            "line 8, resilience4j.circuitbreaker.instances.a.waitDurationInOpenState: is not a duration",
        ),
        (
            both("        baseConfig: shared\n", ""),
            "line 5, resilience4j.retry.instances.a.baseConfig: names no config: there is no \"shared\" under configs",
        ),
        (
            both("", "        baseConfig: a\n"),
            "line 8, resilience4j.circuitbreaker.instances.a.baseConfig: makes a circular chain of baseConfig",
        ),
        (
            "resilience4j.retry:\n  configs:\n    x:\n      baseConfig: y\n    y:\n      baseConfig: x\n  instances:\n    a:\n      baseConfig: x\n".to_string(),
            "baseConfig: makes a circular chain of baseConfig",
        ),
        (
            both("        maxAttempts: -1\n", ""),
            "line 5, resilience4j.retry.instances.a.maxAttempts: must be at least 1",
        ),
        (
            both("", "        failureRateThreshold: 0\n"),
            "line 8, resilience4j.circuitbreaker.instances.a.failureRateThreshold: must be from 1 to 100",
        ),
        (
            both("", "        slidingWindowType: SLIDING\n"),
            "line 8, resilience4j.circuitbreaker.instances.a.slidingWindowType: must be one of COUNT_BASED, TIME_BASED (found \"SLIDING\")",
        ),
        (
            both(
                "        waitDuration: 0\n        enableExponentialBackoff: true\n",
                "",
            ),
            "line 5, resilience4j.retry.instances.a.waitDuration: must be at least 1ms",
        ),
        (
            both("        randomizedWaitFactor: 1\n", ""),
            "line 5, resilience4j.retry.instances.a.randomizedWaitFactor: must be at least 0 and below 1",
        ),
        (
            "resilience4j: [\n".to_string(),
            "line 2: is not valid YAML",
        ),
    ] {
        if want.is_empty() {
            r4j(&text);
            continue;
        }
        let e = r4j_err(&text);
        assert!(e.contains(want), "{want}\n{e}\n{text}");
    }
    // Without `instance`, and in a scenario: exit 2 naming the file.
    let e = resilience4j::map(&both("", ""), &Selector::new()).unwrap_err();
    assert!(e.render().contains("needs `instance`"));
    let d = folder(&[
        ("application.yml", &both("        waitDuration: 1.5s\n", "")),
        (
            "imported.toml",
            &scenario(
                "import = { format = 'resilience4j', file = 'application.yml', instance = 'a' }",
            ),
        ),
    ]);
    let e = error(d.path(), "imported.toml");
    assert!(
        e.contains("fleets[0].layers[0].import: 'application.yml' line 5, resilience4j.retry.instances.a.waitDuration: is not a duration"),
        "{e}"
    );
}

#[test]
fn retrysim_import_prints_a_resilience4j_layer_that_loads_as_the_import_does() {
    let d = folder(&[
        ("application.yml", &fixture("resilience4j_demo_application.yml")),
        (
            "imported.toml",
            &scenario("import = { format = 'resilience4j', file = 'application.yml', instance = 'backendA' }"),
        ),
    ]);
    let o = retrysim(
        d.path(),
        &[
            "import",
            "application.yml",
            "--format",
            "resilience4j",
            "--instance",
            "backendA",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let layer = String::from_utf8(o.stdout).unwrap();
    assert!(layer.contains("backoff.initial = \"100ms\""), "{layer}");
    assert!(
        layer.contains("# application.yml:68 resilience4j.retry.configs.default.waitDuration\n"),
        "{layer}"
    );
    std::fs::write(d.path().join("printed.toml"), scenario(&layer)).unwrap();
    assert_eq!(
        model(&loaded(d.path(), "printed.toml")),
        model(&loaded(d.path(), "imported.toml"))
    );
    let o = retrysim(
        d.path(),
        &[
            "import",
            "application.yml",
            "--format",
            "resilience4j",
            "--instance",
            "backendC",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains(
        "'application.yml' resilience4j.retry.instances: has no instance named \"backendC\""
    ));
}

#[test]
fn the_aws_cli_guides_config_gives_the_layer_written_by_hand() {
    let d = folder(&[
        ("config", &fixture("aws_cli_retries_config")),
        (
            "imported.toml",
            &scenario("import = { format = 'aws_config', file = 'config' }"),
        ),
        (
            "by_hand.toml",
            &scenario("preset = 'aws_standard'\nmax_attempts = 6"),
        ),
    ]);
    same_as_by_hand(d.path());
    assert!(loaded(d.path(), "imported.toml")
        .import_warnings(false)
        .is_empty());
}

/// The model of a scenario importing `config` with `profile`, and of `by_hand`.
fn aws_same(config: &str, profile: Option<&str>, by_hand: &str) {
    let p = profile.map_or(String::new(), |p| format!(", profile = '{p}'"));
    let d = folder(&[
        ("config", config),
        (
            "imported.toml",
            &scenario(&format!(
                "import = {{ format = 'aws_config', file = 'config'{p} }}"
            )),
        ),
        ("by_hand.toml", &scenario(by_hand)),
    ]);
    same_model(d.path());
}

#[test]
fn each_retry_mode_is_its_preset_and_absent_fields_take_botocores_defaults() {
    // No retry_mode: botocore's legacy, its 5 attempts.
    aws_same(
        "[default]\nregion = us-east-1\n",
        None,
        "preset = 'aws_legacy'",
    );
    aws_same(
        "[default]\nretry_mode = legacy\n",
        None,
        "preset = 'aws_legacy'",
    );
    aws_same(
        "[default]\nretry_mode = standard\n",
        None,
        "preset = 'aws_standard'",
    );
    aws_same(
        "[default]\nretry_mode = adaptive\n",
        None,
        "preset = 'aws_adaptive'",
    );
    // defaults_mode other than legacy makes standard the default mode.
    aws_same(
        "[default]\ndefaults_mode = in-region\n",
        None,
        "preset = 'aws_standard'",
    );
    // max_attempts is the total; a profile is `[profile NAME]`, `[profile default]`
    // written after `[default]` wins.
    aws_same(
        "[default]\nretry_mode = standard\n\n[profile ci]\n# the CI's\nretry_mode = adaptive\nMax_Attempts = 2\n",
        Some("ci"),
        "preset = 'aws_adaptive'\nmax_attempts = 2",
    );
    aws_same(
        "[default]\nretry_mode = standard\n[profile default]\nretry_mode = legacy\nmax_attempts = 1\n",
        None,
        "preset = 'aws_legacy'\nmax_attempts = 1",
    );
    // Provenance: the line of max_attempts, and botocore's default said.
    let m = aws_config::map("[default]\n\nmax_attempts = 4\n", &Selector::new()).unwrap();
    let (_, v, p) = &m.keys[0];
    assert_eq!((v.as_integer(), p.line), (Some(4), 3));
    let (_, _, p) = m.keys.iter().find(|(k, _, _)| k == "backoff.kind").unwrap();
    assert!(p
        .note
        .as_deref()
        .unwrap()
        .contains("botocore's default, legacy"));
}

#[test]
fn each_bad_aws_config_is_refused_with_its_file_line_and_field() {
    let err = |text: &str, profile: &str| {
        aws_config::map(text, &sel("profile", profile))
            .unwrap_err()
            .render()
    };
    for (text, profile, want) in [
        (
            "[default]\nretry_mode = fast\n",
            "default",
            "line 2, [default] retry_mode: must be legacy, standard or adaptive, as botocore requires (found \"fast\")",
        ),
        (
            "[default]\nretry_mode = standard # mine\n",
            "default",
            "botocore reads no comment after a value",
        ),
        (
            "[profile x]\nmax_attempts = 0\n",
            "x",
            "line 2, [profile x] max_attempts: must be a whole number of at least 1",
        ),
        (
            "[profile x]\nmax_attempts = three\n",
            "x",
            "line 2, [profile x] max_attempts: must be a whole number of at least 1",
        ),
        (
            "[x]\nretry_mode = standard\n",
            "x",
            "has no profile \"x\" ([x] is how the credentials file names a profile; in the config file it is [profile x]) (the profiles: none)",
        ),
        (
            "[default]\n[profile a]\n",
            "b",
            "has no profile \"b\" (the profiles: \"default\", \"a\")",
        ),
        (
            "[default]\nretry_mode = standard\nretry_mode = legacy\n",
            "default",
            "line 3, [default] retry_mode: is written twice in the section (first on line 2)",
        ),
        (
            "[default]\ndefaults_mode = fastest\n",
            "default",
            "line 2, [default] defaults_mode: must be legacy, standard",
        ),
    ] {
        let e = err(text, profile);
        assert!(e.contains(want), "{want}\n{e}");
    }
    let d = folder(&[
        ("config", "[default]\nretry_mode = fast\n"),
        (
            "imported.toml",
            &scenario("import = { format = 'aws_config', file = 'config' }"),
        ),
    ]);
    let e = error(d.path(), "imported.toml");
    assert!(
        e.contains("fleets[0].layers[0].import: 'config' line 2, [default] retry_mode: must be legacy, standard or adaptive"),
        "{e}"
    );
}

#[test]
fn retrysim_import_reads_an_aws_profile() {
    let d = folder(&[(
        "config",
        "[default]\nregion = us-west-2\n[profile batch]\nretry_mode = adaptive\n",
    )]);
    let o = retrysim(
        d.path(),
        &[
            "import",
            "config",
            "--format",
            "aws_config",
            "--profile",
            "batch",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let layer = String::from_utf8(o.stdout).unwrap();
    assert!(layer.contains("limiter.kind = \"aws_adaptive\""), "{layer}");
    assert!(
        layer.contains("# config:4 [profile batch] retry_mode"),
        "{layer}"
    );
    std::fs::write(d.path().join("printed.toml"), scenario(&layer)).unwrap();
    std::fs::write(
        d.path().join("by_hand.toml"),
        scenario("preset = 'aws_adaptive'"),
    )
    .unwrap();
    assert_eq!(
        model(&loaded(d.path(), "printed.toml")),
        model(&loaded(d.path(), "by_hand.toml"))
    );
    // --profile is no selector of another format.
    let o = retrysim(
        d.path(),
        &[
            "import",
            "config",
            "--format",
            "envoy",
            "--profile",
            "batch",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--profile: not a selector of envoy"));
}

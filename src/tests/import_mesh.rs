//! Service mesh configurations imported (`format = "istio"`, `"linkerd"`): the
//! projects' own examples give exactly the layer written by hand (the same scenario,
//! the same output bytes); Istio's and Linkerd's defaults one by one, their
//! selection among documents and routes, their refusals, and what retrysim cannot
//! model, each with its line and field.

use proptest::prelude::*;

use crate::scenario::import::{istio, linkerd, Mapped, Selector};

use crate::tests::common::retrysim;

use crate::tests::import_support::{
    error, fixture, folder, loaded, model, same_as_by_hand, scenario,
};

fn selector(pairs: &[(&str, &str)]) -> Selector {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The value at the dotted `key` of a mapped layer.
fn at(m: &Mapped, key: &str) -> Option<toml::Value> {
    let mut v = &toml::Value::Table(m.table());
    for k in key.split('.') {
        v = v.get(k)?;
    }
    Some(v.clone())
}

fn int(n: i64) -> Option<toml::Value> {
    Some(toml::Value::Integer(n))
}

fn text(s: &str) -> Option<toml::Value> {
    Some(toml::Value::from(s))
}

fn list(items: &[&str]) -> Option<toml::Value> {
    Some(toml::Value::Array(
        items.iter().map(|s| toml::Value::from(*s)).collect(),
    ))
}

/// The warnings' (line, setting, unmodelled).
fn warned(m: &Mapped) -> Vec<(u64, String, bool)> {
    m.warnings
        .iter()
        .map(|w| (w.line, w.setting.clone(), w.unmodelled))
        .collect()
}

// ---- Istio ----

/// A VirtualService whose one HTTP route has `route_body` (indented 4 spaces) after
/// its destination.
fn vs(route_body: &str) -> String {
    format!(
        "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: reviews\nspec:\n  hosts:\n  - reviews\n  http:\n  - route:\n    - destination:\n        host: reviews\n{route_body}"
    )
}

fn istio_map(text: &str) -> Mapped {
    istio::map(text, &Selector::new()).unwrap_or_else(|e| panic!("{}", e.render()))
}

fn istio_refusal(text: &str, sel: &[(&str, &str)]) -> String {
    match istio::map(text, &selector(sel)) {
        Ok(m) => panic!("imports: {:?}", m.table()),
        Err(e) => e.render(),
    }
}

#[test]
fn istios_documented_ratings_retries_give_the_layer_written_by_hand() {
    let d = folder(&[
        ("ratings.yaml", &fixture("istio_ratings_retries.yaml")),
        (
            "imported.toml",
            &scenario("import = { format = 'istio', file = 'ratings.yaml' }"),
        ),
        (
            "by_hand.toml",
            &scenario(
                "max_attempts = 4\nretry_on = ['rejected', 'error']\nattempt_timeout = '2s'\n\
                 respect_retry_after = false\ncancel_on_timeout = true\n\
                 backoff = { kind = 'envoy', base = '25ms', max = '250ms' }",
            ),
        ),
    ]);
    same_as_by_hand(d.path());
    let l = loaded(d.path(), "imported.toml");
    assert!(
        l.import_warnings(false).is_empty(),
        "{:?}",
        l.import_warnings(false)
    );
    // The same VirtualService named, and its route named by place, is the same layer.
    let named = istio::map(
        &fixture("istio_ratings_retries.yaml"),
        &selector(&[("virtual_service", "ratings"), ("route", "http[0]")]),
    )
    .unwrap();
    assert_eq!(
        named.table(),
        istio_map(&fixture("istio_ratings_retries.yaml")).table()
    );
}

#[test]
fn istios_api_reference_retry_example_gives_the_layer_written_by_hand() {
    let d = folder(&[
        ("vs.yaml", &fixture("istio_api_ratings_route_retries.yaml")),
        (
            "imported.toml",
            &scenario("import = { format = 'istio', file = 'vs.yaml', virtual_service = 'ratings-route' }"),
        ),
        (
            "by_hand.toml",
            &scenario(
                "max_attempts = 4\nretry_on = ['rejected_5xx', 'error', 'timeout']\nattempt_timeout = '2s'\n\
                 respect_retry_after = false\ncancel_on_timeout = true\n\
                 backoff = { kind = 'envoy', base = '25ms', max = '250ms' }",
            ),
        ),
    ]);
    assert_eq!(
        model(&loaded(d.path(), "imported.toml")),
        model(&loaded(d.path(), "by_hand.toml"))
    );
    // connect-failure and refused-stream never fire in retrysim: said, with the line.
    let w = loaded(d.path(), "imported.toml").import_warnings(false);
    assert_eq!(w.len(), 2, "{w:#?}");
    for cond in ["connect-failure", "refused-stream"] {
        let want =
            "'vs.yaml' line 16, spec.http[0].retries.retryOn: not modelled: retrysim produces no";
        assert!(
            w.iter().any(|x| x.contains(want) && x.contains(cond)),
            "{cond}: {w:#?}"
        );
    }
}

#[test]
fn istios_documented_route_timeout_keeps_istios_default_retries() {
    let d = folder(&[
        ("ratings.yaml", &fixture("istio_ratings_timeout.yaml")),
        (
            "imported.toml",
            &scenario("import = { format = 'istio', file = 'ratings.yaml' }"),
        ),
        (
            "by_hand.toml",
            &scenario(
                "max_attempts = 3\nretry_on = ['rejected', 'error']\ntotal_timeout = '10s'\n\
                 respect_retry_after = false\ncancel_on_timeout = true\n\
                 backoff = { kind = 'envoy', base = '25ms', max = '250ms' }",
            ),
        ),
    ]);
    same_as_by_hand(d.path());
    let l = loaded(d.path(), "imported.toml");
    // Istio's default policy is said (a mesh default may replace it), not refused.
    assert!(l.import_warnings(true).is_empty());
    let w = l.import_warnings(false);
    assert_eq!(w.len(), 1, "{w:#?}");
    assert!(
        w[0].contains(
            "'ratings.yaml' line 9, spec.http[0]: no `retries`: Istio's default policy, 2 retries"
        ),
        "{w:#?}"
    );
}

#[test]
fn absent_fields_take_istios_defaults_one_by_one() {
    // No retries: Istio's default policy, 2 retries on its default retryOn (of which
    // retrysim produces unavailable's failures), Envoy's backoff, no budget.
    let m = istio_map(&vs(""));
    assert_eq!(at(&m, "max_attempts"), int(3));
    assert_eq!(at(&m, "retry_on"), list(&["rejected", "error"]));
    assert_eq!(at(&m, "backoff.kind"), text("envoy"));
    assert_eq!(at(&m, "budget"), None);
    // No timeout: none (istiod disables Envoy's 15 s route timeout).
    assert_eq!(at(&m, "total_timeout"), None);
    assert_eq!(at(&m, "attempt_timeout"), None);
    // Envoy's 25 ms base interval and 10 × it: Istio sets no retry_back_off.
    let m = istio_map(&vs("    retries:\n      attempts: 1\n"));
    assert_eq!(at(&m, "max_attempts"), int(2));
    assert_eq!(at(&m, "backoff.base"), text("25ms"));
    assert_eq!(at(&m, "backoff.max"), text("250ms"));
    // No perTryTimeout: no attempt timeout; no retryOn: Istio's default.
    assert_eq!(at(&m, "attempt_timeout"), None);
    assert_eq!(at(&m, "retry_on"), list(&["rejected", "error"]));
    assert_eq!(at(&m, "total_timeout"), None);
    // attempts absent or 0: retries disabled, one attempt and nothing else.
    for r in [
        "    retries: {}\n",
        "    retries:\n      attempts: 0\n",
        "    retries:\n      backoff: 1s\n",
    ] {
        let m = istio_map(&vs(r));
        assert_eq!(m.table().len(), 1, "{r}: {:?}", m.table());
        assert_eq!(at(&m, "max_attempts"), int(1), "{r}");
    }
    // `backoff` is Envoy's base interval, its max 10 × it.
    let m = istio_map(&vs(
        "    retries:\n      attempts: 2\n      backoff: 100ms\n",
    ));
    assert_eq!(at(&m, "backoff.base"), text("100ms"));
    assert_eq!(at(&m, "backoff.max"), text("1s"));
    // Numbers in retryOn are retriable status codes (retriable-status-codes added).
    let m = istio_map(&vs(
        "    retries:\n      attempts: 2\n      retryOn: \"503\"\n",
    ));
    assert_eq!(at(&m, "retry_on"), list(&["rejected_5xx"]));
    let m = istio_map(&vs(
        "    retries:\n      attempts: 2\n      retryOn: 5xx,409\n",
    ));
    assert_eq!(
        at(&m, "retry_on"),
        list(&["rejected_5xx", "error", "timeout", "conflict"])
    );
    // Only conditions retrysim never produces: Envoy never retries.
    let m = istio_map(&vs(
        "    retries:\n      attempts: 2\n      retryOn: connect-failure\n",
    ));
    assert_eq!(at(&m, "max_attempts"), int(1));
    assert_eq!(at(&m, "retry_on"), None);
    // Durations are Go's.
    let m = istio_map(&vs(
        "    timeout: 1m30s\n    retries:\n      attempts: 2\n      perTryTimeout: 1.5s\n",
    ));
    assert_eq!(at(&m, "total_timeout"), text("90s"));
    assert_eq!(at(&m, "attempt_timeout"), text("1500ms"));
}

#[test]
fn istio_picks_the_virtual_service_and_route_the_selector_names() {
    let file = format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: reviews\n---\n{}---\n{}",
        vs("    retries:\n      attempts: 5\n"),
        vs("").replace("name: reviews\nspec", "name: other\nspec").replace(
            "  - route:\n    - destination:\n        host: reviews\n",
            "  - name: a\n    route:\n    - destination:\n        host: reviews\n    retries:\n      attempts: 2\n  - route:\n    - destination:\n        host: reviews\n    retries:\n      attempts: 7\n",
        )
    );
    let attempts = |sel: &[(&str, &str)]| {
        let m = istio::map(&file, &selector(sel)).unwrap_or_else(|e| panic!("{}", e.render()));
        (at(&m, "max_attempts"), m.matched)
    };
    assert_eq!(
        attempts(&[("virtual_service", "reviews")]),
        (int(6), "spec.http[0]".into())
    );
    assert_eq!(
        attempts(&[("virtual_service", "other"), ("route", "a")]),
        (int(3), "spec.http[0]".into())
    );
    assert_eq!(
        attempts(&[("virtual_service", "other"), ("route", "http[1]")]),
        (int(8), "spec.http[1]".into())
    );
    for (sel, want) in [
        (vec![], "holds 2 VirtualServices (\"reviews\", \"other\"): name one with `virtual_service`"),
        (vec![("virtual_service", "ratings")], "has no VirtualService named \"ratings\" (the VirtualServices: \"reviews\", \"other\")"),
        (vec![("virtual_service", "other")], "spec.http: holds 2 routes: name one with `route`, its name (named: \"a\") or its place such as \"http[1]\""),
        (vec![("virtual_service", "other"), ("route", "b")], "spec.http: has no route named \"b\" (named: \"a\"; 2 in all, \"http[0]\" to \"http[1]\" by place)"),
        (vec![("virtual_service", "other"), ("route", "http[2]")], "has no route named \"http[2]\""),
    ] {
        let e = istio_refusal(&file, &sel);
        assert!(e.contains(want), "want {want}\n got {e}");
    }
    let twice = file.replace("  - route:\n    - destination:\n        host: reviews\n    retries:\n      attempts: 7", "  - name: a\n    route:\n    - destination:\n        host: reviews\n    retries:\n      attempts: 7");
    let e = istio_refusal(&twice, &[("virtual_service", "other"), ("route", "a")]);
    assert!(
        e.contains("spec.http[1]: is a second route named \"a\" (the first is spec.http[0])"),
        "{e}"
    );
    let e = istio_refusal("apiVersion: v1\nkind: Service\n", &[]);
    assert_eq!(e, "holds no VirtualService (the kinds it holds: Service)");
    let e = istio_refusal(
        &vs("").replace("networking.istio.io/v1", "networking.istio.io/v2"),
        &[],
    );
    assert_eq!(e, "line 1, apiVersion: must be one of networking.istio.io/v1, networking.istio.io/v1beta1, networking.istio.io/v1alpha3 for a VirtualService (found \"networking.istio.io/v2\")");
}

#[test]
fn each_bad_istio_file_is_refused_with_its_line_and_field() {
    let r = "spec.http[0]";
    let cases = [
        (vs("    retries:\n      attempts: -1\n"), format!("line 13, {r}.retries.attempts: must be 0 or more, as Istio's validation requires (found -1)")),
        (vs("    retries:\n      attempts: 1.5\n"), format!("line 13, {r}.retries.attempts: must be a whole number from 0 to 2147483647")),
        (vs("    retries:\n      attempts: 2\n      perTryTimeout: 2 s\n"), format!("line 14, {r}.retries.perTryTimeout: must be a Go duration such as \"2s\", \"250ms\" or \"1m30s\", as Istio reads it (unknown unit \" s\"; found \"2 s\")")),
        (vs("    retries:\n      attempts: 2\n      perTryTimeout: 1d\n"), format!("line 14, {r}.retries.perTryTimeout: must be a Go duration")),
        (vs("    retries:\n      attempts: 2\n      perTryTimeout: 500us\n"), format!("line 14, {r}.retries.perTryTimeout: must be at least 1ms, as Istio's validation requires (found \"500us\")")),
        (vs("    retries:\n      attempts: 2\n      perTryTimeout: 1.5ms\n"), format!("line 14, {r}.retries.perTryTimeout: must be whole milliseconds")),
        (vs("    timeout: 10\n"), format!("line 12, {r}.timeout: must be a duration string such as \"2s\" or \"250ms\" (found a number)")),
        (vs("    timeout: 0s\n"), format!("line 12, {r}.timeout: must be at least 1ms")),
        (vs("    retries:\n      attempts: 2\n      retryOn: 5xx, reset\n"), format!("line 14, {r}.retries.retryOn: \" reset\" is no retry condition Istio's validation accepts")),
        (vs("    retries:\n      attempts: 2\n      retryOn: 5xx,\n"), format!("line 14, {r}.retries.retryOn: \"\" is no retry condition")),
        (vs("    retries:\n      attempts: 2\n      retryOn: \"599\"\n"), format!("line 14, {r}.retries.retryOn: \"599\" is no retry condition")),
        (vs("    retries:\n      perTryTimeout: 2s\n"), format!("line 13, {r}.retries.perTryTimeout: cannot be set when `attempts` is 0 or absent")),
        (vs("    retries:\n      attempts: 0\n      retryOn: 5xx\n"), format!("line 14, {r}.retries.retryOn: cannot be set when `attempts` is 0 or absent")),
        (vs("    retries:\n      attempts: 2000000\n"), format!("line 13, {r}.retries.attempts: must be below 1000000 in retrysim")),
        (vs("").replace("  - route:\n    - destination:\n        host: reviews\n", "  - redirect:\n      uri: /v1\n"), format!("line 9, {r}: has no `route` destination: a redirect or a direct response makes no upstream call")),
        (vs("").replace("  - route:\n    - destination:\n        host: reviews\n", "  - delegate:\n      name: r\n"), format!("line 9, {r}: is a delegate")),
        (vs("").replace("  http:\n", "  tcp:\n"), "line 5, spec: has no `http` routes".to_string()),
        ("kind: VirtualService\n".to_string(), "line 1, apiVersion: is needed for a VirtualService".to_string()),
        ("apiVersion: [\n".to_string(), "line 2: is not valid YAML".to_string()),
    ];
    for (file, want) in cases {
        let e = istio_refusal(&file, &[]);
        assert!(e.contains(&want), "want {want}\n got {e}\n{file}");
    }
    // In a scenario, the error names the scenario, the layer and the file.
    let d = folder(&[
        ("vs.yaml", &vs("    retries:\n      attempts: -1\n")),
        (
            "s.toml",
            &scenario("import = { format = 'istio', file = 'vs.yaml' }"),
        ),
    ]);
    let e = error(d.path(), "s.toml");
    assert!(
        e.contains("s.toml': fleets[0].layers[0].import: 'vs.yaml' line 13, spec.http[0].retries.attempts: must be 0 or more"),
        "{e}"
    );
}

#[test]
fn what_istio_sets_that_retrysim_cannot_model_is_said_with_its_line() {
    let file = vs("    - destination:\n        host: reviews-canary\n      weight: 10\n    fault:\n      abort:\n        httpStatus: 503\n    mirror:\n      host: shadow\n    retries:\n      attempts: 2\n      retryRemoteLocalities: true\n      retryIgnorePreviousHosts: false\n      jitter: 0.1\n")
        .replace(
            "  - route:\n",
            "  - match:\n    - uri:\n        prefix: /v1\n      headers:\n        x-canary:\n          exact: \"1\"\n    route:\n",
        );
    let m = istio_map(&file);
    let r = "spec.http[0]";
    assert_eq!(
        warned(&m),
        [
            (10, format!("{r}.match[0].uri"), true),
            (12, format!("{r}.match[0].headers"), true),
            (21, format!("{r}.fault"), true),
            (24, format!("{r}.mirror"), true),
            (15, format!("{r}.route"), true),
            (28, format!("{r}.retries.retryRemoteLocalities"), true),
            (29, format!("{r}.retries.retryIgnorePreviousHosts"), true),
            (30, format!("{r}.retries.jitter"), true),
        ]
    );
    assert_eq!(at(&m, "max_attempts"), int(3));
    // check --deny-unmodelled stops on them: exit 2.
    let d = folder(&[
        ("vs.yaml", &file),
        (
            "s.toml",
            &scenario("import = { format = 'istio', file = 'vs.yaml' }"),
        ),
    ]);
    let o = retrysim(d.path(), &["check", "s.toml", "--deny-unmodelled"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "'vs.yaml' line 21, spec.http[0].fault: not modelled: Istio's fault injection"
        ),
        "{err}"
    );
}

#[test]
fn retrysim_import_prints_an_istio_route_that_loads_as_the_import_does() {
    let file = vs("    timeout: 5s\n    retries:\n      attempts: 3\n      perTryTimeout: 1s\n      retryOn: 5xx,reset\n      backoff: 50ms\n")
        .replace("  - route:\n", "  - name: main\n    route:\n")
        + "  - name: fallback\n    route:\n    - destination:\n        host: reviews\n";
    let d = folder(&[
        ("vs.yaml", &file),
        (
            "imported.toml",
            &scenario("import = { format = 'istio', file = 'vs.yaml', route = 'main' }"),
        ),
    ]);
    let o = retrysim(
        d.path(),
        &[
            "import",
            "vs.yaml",
            "--format",
            "istio",
            "--route",
            "main",
            "--virtual-service",
            "reviews",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let layer = String::from_utf8(o.stdout).unwrap();
    assert!(
        layer.contains("# vs.yaml:15 spec.http[0].retries.attempts (attempts + 1)\n"),
        "{layer}"
    );
    std::fs::write(d.path().join("printed.toml"), scenario(&layer)).unwrap();
    assert_eq!(
        model(&loaded(d.path(), "printed.toml")),
        model(&loaded(d.path(), "imported.toml"))
    );
    let l = loaded(d.path(), "imported.toml");
    let layer = &l.scenario.fleets[0].layers[0];
    assert_eq!(
        layer.max_attempts,
        crate::model::config::Attempts::Limited(4)
    );
    let o = retrysim(d.path(), &["import", "vs.yaml", "--format", "istio"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("'vs.yaml' spec.http: holds 2 routes: name one with `route`"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = retrysim(
        d.path(),
        &[
            "import",
            "vs.yaml",
            "--format",
            "linkerd",
            "--virtual-service",
            "x",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(
            "--virtual-service: not a selector of linkerd (allowed: --route, --service-profile)"
        ),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

// ---- Linkerd ----

/// A ServiceProfile of one route, `GET /x`, with `route_body` (indented 6 spaces) and
/// `spec_body` (indented 2).
fn sp(route_body: &str, spec_body: &str) -> String {
    format!(
        "apiVersion: linkerd.io/v1alpha2\nkind: ServiceProfile\nmetadata:\n  name: svc.ns.svc.cluster.local\nspec:\n  routes:\n    - name: GET /x\n      condition:\n        method: GET\n{route_body}{spec_body}"
    )
}

fn linkerd_map(text: &str) -> Mapped {
    linkerd::map(text, &Selector::new()).unwrap_or_else(|e| panic!("{}", e.render()))
}

fn linkerd_refusal(text: &str, sel: &[(&str, &str)]) -> String {
    match linkerd::map(text, &selector(sel)) {
        Ok(m) => panic!("imports: {:?}", m.table()),
        Err(e) => e.render(),
    }
}

#[test]
fn linkerds_booksapp_retries_and_timeouts_give_the_layers_written_by_hand() {
    let file = fixture("linkerd_booksapp_retries_timeouts.yaml");
    let d = folder(&[
        ("profiles.yaml", &file),
        (
            "imported.toml",
            &scenario("import = { format = 'linkerd', file = 'profiles.yaml', service_profile = 'authors.booksapp.svc.cluster.local', route = 'HEAD /authors/{id}.json' }"),
        ),
        (
            "by_hand.toml",
            &scenario(
                "max_attempts = 'unlimited'\nretry_on = ['rejected_5xx', 'error']\nrespect_retry_after = false\n\
                 backoff = { kind = 'none' }\n\
                 budget = { kind = 'tower', ttl = '10s', min_per_sec = 10, percent = 20, truncate = true, deposit = 'success' }",
            ),
        ),
    ]);
    same_as_by_hand(d.path());
    // The deposit rule differs from linkerd2-proxy's: said, as a note.
    let l = loaded(d.path(), "imported.toml");
    assert!(l.import_warnings(true).is_empty());
    let w = l.import_warnings(false);
    assert_eq!(w.len(), 1, "{w:#?}");
    assert!(
        w[0].contains("'profiles.yaml' line 12, spec.routes[0].isRetryable: linkerd2-proxy deposits into the budget when a call ends on a result it does not retry"),
        "{w:#?}"
    );
    // The books profile's route: no retries, the 15 ms timeout over the call.
    let m = linkerd::map(
        &file,
        &selector(&[("service_profile", "books.booksapp.svc.cluster.local")]),
    )
    .unwrap();
    assert_eq!(m.table().len(), 2, "{:?}", m.table());
    assert_eq!(at(&m, "max_attempts"), int(1));
    assert_eq!(at(&m, "total_timeout"), text("15ms"));
    assert!(m.warnings.is_empty());
}

#[test]
fn linkerds_booksapp_webapp_profile_routes_are_not_retried() {
    let file = fixture("linkerd_booksapp_webapp_profile.yaml");
    let d = folder(&[
        ("webapp.yaml", &file),
        (
            "imported.toml",
            &scenario(
                "import = { format = 'linkerd', file = 'webapp.yaml', route = 'GET /books/{id}' }",
            ),
        ),
        ("by_hand.toml", &scenario("max_attempts = 1")),
    ]);
    same_as_by_hand(d.path());
    let m = linkerd::map(&file, &selector(&[("route", "POST /books")])).unwrap();
    assert_eq!(m.matched, "spec.routes[5]");
    assert_eq!(m.keys[0].2.line, 29);
    let e = linkerd_refusal(&file, &[]);
    assert!(
        e.starts_with("spec.routes: holds 9 routes: name one with `route`, its name (named: \"GET /\", \"POST /authors\""),
        "{e}"
    );
}

#[test]
fn absent_fields_take_linkerds_defaults_one_by_one() {
    // No retryBudget: the controller's default, 0.2, 10/s, 10 s.
    let m = linkerd_map(&sp("      isRetryable: true\n", ""));
    assert_eq!(at(&m, "budget.kind"), text("tower"));
    assert_eq!(at(&m, "budget.ttl"), text("10s"));
    assert_eq!(at(&m, "budget.min_per_sec"), int(10));
    assert_eq!(at(&m, "budget.percent"), Some(toml::Value::Float(20.0)));
    assert_eq!(at(&m, "max_attempts"), text("unlimited"));
    // No timeout: none (no default since stable-2.10).
    assert_eq!(at(&m, "total_timeout"), None);
    // No isRetryable, or false: one attempt, no budget.
    for r in ["", "      isRetryable: false\n"] {
        let m = linkerd_map(&sp(
            r,
            "  retryBudget:\n    retryRatio: 0.5\n    minRetriesPerSecond: 1\n    ttl: 5s\n",
        ));
        assert_eq!(m.table().len(), 1, "{:?}", m.table());
        assert_eq!(at(&m, "max_attempts"), int(1));
    }
    // A written budget is read; the ratio is tower's percent.
    let m = linkerd_map(&sp(
        "      isRetryable: true\n      timeout: 250ms\n",
        "  retryBudget:\n    retryRatio: 0.5\n    minRetriesPerSecond: 1\n    ttl: 5s\n",
    ));
    assert_eq!(at(&m, "budget.percent"), Some(toml::Value::Float(50.0)));
    assert_eq!(at(&m, "budget.min_per_sec"), int(1));
    assert_eq!(at(&m, "budget.ttl"), text("5s"));
    assert_eq!(at(&m, "total_timeout"), text("250ms"));
    // A timeout of 0 is none, and said.
    let m = linkerd_map(&sp("      timeout: 0s\n", ""));
    assert_eq!(at(&m, "total_timeout"), None);
    assert_eq!(
        warned(&m),
        [(10, "spec.routes[0].timeout".to_string(), false)]
    );
    // Two retryable routes share Linkerd's one budget: said.
    let two = sp(
        "      isRetryable: true\n",
        "    - name: b\n      condition:\n        method: GET\n      isRetryable: true\n",
    );
    let m = linkerd::map(&two, &selector(&[("route", "b")])).unwrap();
    assert!(
        m.warnings.iter().any(|w| w
            .message
            .contains("shares one budget among the profile's 2 retryable routes")),
        "{:?}",
        m.warnings
    );
}

#[test]
fn each_bad_linkerd_file_is_refused_with_its_line_and_field() {
    let budget = |b: &str| sp("      isRetryable: true\n", &format!("  retryBudget:\n{b}"));
    let cases = [
        (budget("    retryRatio: 0.2\n    minRetriesPerSecond: 10\n"), "line 11, spec.retryBudget: needs `ttl`, as the ServiceProfile CRD requires"),
        (budget("    retryRatio: 0.2\n    minRetriesPerSecond: 10\n    ttl: 100s\n"), "line 14, spec.retryBudget.ttl: must be from 1s to 60s: linkerd2-proxy ignores the budget outside, retrying nothing (found \"100s\")"),
        (budget("    retryRatio: 0.2\n    minRetriesPerSecond: 10\n    ttl: \"10\"\n"), "line 14, spec.retryBudget.ttl: must be a Go duration such as \"250ms\" or \"10s\", as Linkerd reads it (missing unit; found \"10\")"),
        (budget("    retryRatio: -0.1\n    minRetriesPerSecond: 10\n    ttl: 10s\n"), "line 12, spec.retryBudget.retryRatio: must be from 0 to 1000"),
        (budget("    retryRatio: 0.2\n    minRetriesPerSecond: 1.5\n    ttl: 10s\n"), "line 13, spec.retryBudget.minRetriesPerSecond: must be a whole number from 0 to 2147483647"),
        (sp("      timeout: 1d\n", ""), "line 10, spec.routes[0].timeout: must be a Go duration such as \"250ms\" or \"10s\", as Linkerd reads it (unknown unit \"d\"; found \"1d\")"),
        (sp("      timeout: -1s\n", ""), "line 10, spec.routes[0].timeout: must not be negative"),
        (sp("      isRetryable: yes\n", ""), "line 10, spec.routes[0].isRetryable: must be true or false (found a string)"),
        (sp("", "    - condition:\n        method: GET\n"), "line 10, spec.routes[1]: needs `name`, as Linkerd's validation requires"),
        (sp("", "    - name: b\n"), "line 10, spec.routes[1]: needs a `condition`, as Linkerd's validation requires"),
        (sp("", "").replace("v1alpha2", "v1alpha1"), "line 1, apiVersion: must be one of linkerd.io/v1alpha2 for a ServiceProfile (found \"linkerd.io/v1alpha1\")"),
        (sp("", "").replace("  routes:\n    - name: GET /x\n      condition:\n        method: GET\n", "  routes: []\n"), "line 5, spec: has no `routes`"),
        (fixture("istio_ratings_retries.yaml"), "holds no ServiceProfile (the kinds it holds: VirtualService)"),
    ];
    for (file, want) in cases {
        let e = linkerd_refusal(&file, &[]);
        assert!(e.contains(want), "want {want}\n got {e}\n{file}");
    }
    let e = linkerd_refusal(&sp("", ""), &[("route", "GET /y")]);
    assert_eq!(e, "spec.routes: has no route named \"GET /y\" (named: \"GET /x\"; 1 in all, \"routes[0]\" to \"routes[0]\" by place)");
    // A budget Linkerd would not apply is refused on a route that does not retry too:
    // the controller drops the whole profile.
    let e = linkerd_refusal(
        &sp(
            "",
            "  retryBudget:\n    retryRatio: 0.2\n    minRetriesPerSecond: 10\n    ttl: 0.5s\n",
        ),
        &[],
    );
    assert!(
        e.contains("line 13, spec.retryBudget.ttl: must be from 1s to 60s"),
        "{e}"
    );
}

#[test]
fn what_linkerd_sets_that_retrysim_cannot_model_is_said_with_its_line() {
    let file = sp(
        "      isRetryable: true\n      responseClasses:\n        - condition:\n            status:\n              min: 500\n          isFailure: true\n",
        "  dstOverrides:\n    - authority: svc-v2.ns.svc.cluster.local:8080\n      weight: 100m\n",
    );
    let m = linkerd_map(&file);
    let unmodelled: Vec<_> = warned(&m).into_iter().filter(|w| w.2).collect();
    assert_eq!(
        unmodelled,
        [
            (11, "spec.routes[0].responseClasses".to_string(), true),
            (16, "spec.dstOverrides".to_string(), true),
        ]
    );
}

#[test]
fn retrysim_import_prints_a_linkerd_route_that_loads_as_the_import_does() {
    let d = folder(&[
        ("profiles.yaml", &fixture("linkerd_booksapp_retries_timeouts.yaml")),
        (
            "imported.toml",
            &scenario("import = { format = 'linkerd', file = 'profiles.yaml', service_profile = 'authors.booksapp.svc.cluster.local' }"),
        ),
    ]);
    let o = retrysim(
        d.path(),
        &[
            "import",
            "profiles.yaml",
            "--format",
            "linkerd",
            "--route",
            "HEAD /authors/{id}.json",
            "--service-profile",
            "authors.booksapp.svc.cluster.local",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let layer = String::from_utf8(o.stdout).unwrap();
    assert!(
        layer.contains("budget.ttl = \"10s\"")
            && layer.contains("# profiles.yaml:16 spec.retryBudget.ttl\n"),
        "{layer}"
    );
    assert!(
        layer.contains("# note: profiles.yaml:12 spec.routes[0].isRetryable: "),
        "{layer}"
    );
    std::fs::write(d.path().join("printed.toml"), scenario(&layer)).unwrap();
    assert_eq!(
        model(&loaded(d.path(), "printed.toml")),
        model(&loaded(d.path(), "imported.toml"))
    );
    let o = retrysim(
        d.path(),
        &["import", "profiles.yaml", "--format", "linkerd"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("'profiles.yaml' holds 2 ServiceProfiles (\"authors.booksapp.svc.cluster.local\", \"books.booksapp.svc.cluster.local\"): name one with `service_profile`"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Pieces a mutation writes into a file: YAML's syntax, durations, numbers, names.
const PIECES: [&str; 24] = [
    "",
    " ",
    "\n",
    ":",
    "- ",
    "---\n",
    "{",
    "[",
    "\"",
    "#",
    "0",
    "-1",
    "1.5",
    "1d",
    "500us",
    "9223372036854775808ns",
    "retryOn: 5xx",
    "attempts: ",
    "http:",
    "routes:",
    "ttl: ",
    "isRetryable: true",
    "kind: VirtualService",
    "kind: ServiceProfile",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every mutated mesh file ends in a layer or a refusal naming where: never a panic.
    #[test]
    fn mutated_mesh_files_never_panic_the_importers(
        which in 0usize..5,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0usize..24, 0usize..4), 1..6),
        route in prop::sample::select(vec!["", "http[0]", "http[9]", "a", "HEAD /authors/{id}.json", "PUT /books/{id}.json"]),
        named in prop::sample::select(vec!["", "ratings", "authors.booksapp.svc.cluster.local", "books.booksapp.svc.cluster.local"]),
    ) {
        let names = [
            "istio_ratings_retries.yaml",
            "istio_ratings_timeout.yaml",
            "istio_api_ratings_route_retries.yaml",
            "linkerd_booksapp_webapp_profile.yaml",
            "linkerd_booksapp_retries_timeouts.yaml",
        ];
        let mut text = fixture(names[which]);
        for (at, piece, cut) in edits {
            let mut i = at.index(text.len() + 1);
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            let mut end = (i + cut).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.replace_range(i..end, PIECES[piece]);
        }
        let mut sel = Selector::new();
        if !route.is_empty() {
            sel.insert("route".into(), route.into());
        }
        for (f, key) in [
            (istio::FORMAT, "virtual_service"),
            (linkerd::FORMAT, "service_profile"),
        ] {
            let mut sel = sel.clone();
            if !named.is_empty() {
                sel.insert(key.into(), named.into());
            }
            match (f.map)(&text, &sel) {
                Ok(m) => prop_assert!(!m.keys.is_empty()),
                Err(e) => prop_assert!(!e.render().is_empty()),
            }
        }
    }
}

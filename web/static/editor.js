// The editor's marks: which line of a scenario's text an error names, and the
// backdrop behind the textarea that highlights it.

/** The segments of a field path as messages write it: `fleets[0].layers[1].backoff`
 * gives ["fleets", 0, "layers", 1, "backoff"]. */
function segments(path) {
  const out = [];
  for (const part of path.split(".")) {
    const m = part.match(/^([^[\]]*)((?:\[\d+\])*)$/);
    if (!m) return out;
    if (m[1]) out.push(m[1].replace(/^"|"$/g, ""));
    for (const i of m[2].matchAll(/\[(\d+)\]/g)) out.push(Number(i[1]));
  }
  return out;
}

/** A TOML key as written (bare, or quoted), split at its dots. */
function keyParts(key) {
  return key
    .split(".")
    .map((k) => k.trim().replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1"));
}

/**
 * The 1-based line of `text` that `message` (the CLI's) names: the line a TOML parse
 * error gives, else the line that writes the longest start of the field path the
 * message names (`scenario 'x': fleets[0].layers[0].max_atempts: ...`): its key, or
 * its table's header. `null` when it names none.
 */
export function lineOf(text, message) {
  const at = message.match(/\bat line (\d+)/) ?? message.match(/\bline (\d+)/);
  if (at) return Number(at[1]);
  const field = message.match(/^error: scenario '[^']*': ([A-Za-z_][\w"-]*(?:\[\d+\])*(?:\.[\w"-]+(?:\[\d+\])*)*)/);
  if (!field) return null;
  const want = segments(field[1]);
  if (want.length === 0) return null;
  const lines = text.split("\n");
  const counts = new Map();
  let table = [];
  let best = { len: 0, line: null };
  const consider = (path, line) => {
    let n = 0;
    while (n < path.length && n < want.length && path[n] === want[n]) n++;
    if (n === path.length && n > best.len) best = { len: n, line };
  };
  lines.forEach((raw, i) => {
    const l = raw.replace(/#.*$/, "").trim();
    let m;
    if ((m = l.match(/^\[\[([^\]]+)\]\]$/))) {
      // An array of tables: its index counts its headers under the same parent
      // (a parent array of tables is at its last element).
      const parts = keyParts(m[1]);
      let path = [];
      for (let j = 0; j < parts.length; j++) {
        path = [...path, parts[j]];
        const key = JSON.stringify(path);
        if (j < parts.length - 1) {
          if (counts.has(key)) path.push(counts.get(key) - 1);
        } else {
          const n = counts.get(key) ?? 0;
          counts.set(key, n + 1);
          path.push(n);
        }
      }
      table = path;
      consider(table, i + 1);
    } else if ((m = l.match(/^\[([^\]]+)\]$/))) {
      table = keyParts(m[1]);
      consider(table, i + 1);
    } else if ((m = l.match(/^("[^"]*"|'[^']*'|[A-Za-z0-9_.\- "']+?)\s*=/))) {
      const path = [...table, ...keyParts(m[1])];
      consider(path, i + 1);
      // Keys of an inline table on the same line.
      const rest = l.slice(m[0].length);
      for (const k of rest.matchAll(/[{,]\s*([A-Za-z0-9_-]+)\s*=/g)) consider([...path, k[1]], i + 1);
      // An array of inline tables on one line: `[{ at = .. }, { .. }]`.
      if (/^\s*\[\s*\{/.test(rest)) {
        let j = 0;
        for (const item of rest.matchAll(/\{([^}]*)\}/g)) {
          consider([...path, j], i + 1);
          for (const k of item[1].matchAll(/(?:^|,)\s*([A-Za-z0-9_-]+)\s*=/g)) consider([...path, j, k[1]], i + 1);
          j++;
        }
      }
    }
  });
  return best.line;
}

/** Fills `backdrop` with `text`, line `line` (1-based, or null) marked. */
export function renderBackdrop(backdrop, text, line) {
  if (line === null) {
    backdrop.textContent = text;
    return;
  }
  const lines = text.split("\n");
  const before = lines.slice(0, line - 1).join("\n");
  const bad = document.createElement("span");
  bad.className = "bad";
  bad.textContent = lines[line - 1] === undefined || lines[line - 1] === "" ? " " : lines[line - 1];
  const after = lines.slice(line).join("\n");
  backdrop.replaceChildren(
    document.createTextNode(line > 1 ? `${before}\n` : ""),
    bad,
    document.createTextNode(line < lines.length ? `\n${after}` : ""),
  );
}

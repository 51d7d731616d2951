// The page's side of the playground's C ABI (web/src/lib.rs): the request goes into
// the module's memory as UTF-8 JSON, the answer comes back the same way. No
// wasm-bindgen, no other glue: the module imports nothing.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Instantiates the module from its bytes, or from a `fetch` of it (compiled as it
 * downloads, and cached compiled by the browser where it can); returns
 * `run(request) -> answer`. */
export async function loadEngine(source) {
  const { instance } = await instantiate(await source);
  const x = instance.exports;
  let broken = null;
  return {
    /** Runs `{toml, seed}`; the answer is `{ok: true, summary, charts, ...}` or
     * `{ok: false, error}`. A trap (a panic in the engine) is thrown, and the module
     * is unusable after it: load it again. */
    run(request) {
      if (broken) throw broken;
      const input = encoder.encode(JSON.stringify(request));
      const ptr = x.playground_alloc(input.length);
      new Uint8Array(x.memory.buffer, ptr, input.length).set(input);
      let len;
      try {
        len = x.playground_run(ptr, input.length);
      } catch (e) {
        broken = new Error(`the engine stopped (an internal error): ${e.message}`);
        throw broken;
      }
      x.playground_free(ptr, input.length);
      // Read after the run: memory may have grown (a new buffer) meanwhile.
      const out = new Uint8Array(x.memory.buffer, x.playground_output(), len);
      return JSON.parse(decoder.decode(out));
    },
  };
}

/** The module's instance from bytes or a response (a response served without the
 * `application/wasm` type is read whole instead of streamed). */
async function instantiate(source) {
  if (typeof Response === "undefined" || !(source instanceof Response)) {
    return WebAssembly.instantiate(source, {});
  }
  if (!source.ok) throw new Error(`HTTP ${source.status}`);
  if (WebAssembly.instantiateStreaming && (source.headers.get("content-type") ?? "").startsWith("application/wasm")) {
    return WebAssembly.instantiateStreaming(source, {});
  }
  return WebAssembly.instantiate(await source.arrayBuffer(), {});
}

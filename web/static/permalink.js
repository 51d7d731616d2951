// The page's state in its link: JSON, deflated (CompressionStream "deflate-raw"),
// in base64url; no library.

async function pipe(bytes, stream) {
  const out = new Blob([bytes]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(out).arrayBuffer());
}

/** `json` (text) as the link's code. */
export async function encodeState(json) {
  const bytes = await pipe(new TextEncoder().encode(json), new CompressionStream("deflate-raw"));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The JSON text of a link's code. */
export async function decodeState(code) {
  const b64 = code.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(await pipe(bytes, new DecompressionStream("deflate-raw")));
}

// The page's embedded data (render/page.py writes it): a script's base64 text as bytes, and
// as inflated bytes (the reduced model's, deflated).

export function bytes(id) {
  const text = atob(document.getElementById(id).textContent.trim());
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out.buffer;
}

export async function inflated(id) {
  const stream = new Blob([bytes(id)]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Response(stream).arrayBuffer();
}

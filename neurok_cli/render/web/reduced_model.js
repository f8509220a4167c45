// The reduced model's description from its bytes (docs/reduced-model.md, "Bytes"; io/reduced.py
// writes them): the header's values and the arrays as typed arrays over the same buffer.
const TYPES = { f8: Float64Array, f4: Float32Array, i4: Int32Array, i2: Int16Array };

/** The model from io/reduced.py's bytes (an ArrayBuffer): { values, arrays }. */
export function readModel(buffer) {
  const head = new Uint8Array(buffer, 0, 8);
  if (String.fromCharCode(...head.subarray(0, 4)) !== "NRRM") {
    throw new Error("not a reduced model");
  }
  const size = new DataView(buffer).getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, size)));
  if (header.values.format !== "neurok-reduced-model" || header.values.version !== 4) {
    throw new Error(`reduced model version ${header.values.version}: this page reads 4`);
  }
  const arrays = {};
  for (const [name, e] of Object.entries(header.arrays)) {
    const T = TYPES[e.type];
    const count = e.shape.reduce((a, b) => a * b, 1);
    const a = new T(buffer, 8 + size + e.offset, count);
    a.shape = e.shape;
    arrays[name] = a;
  }
  return { values: header.values, arrays };
}

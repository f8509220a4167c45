// Validate glTF/GLB files with the Khronos glTF validator; print one JSON report per line.
// Usage: node tools/validate_gltf.mjs FILE...
import { readFile } from "node:fs/promises";
import path from "node:path";
import validator from "gltf-validator";

for (const file of process.argv.slice(2)) {
  const data = new Uint8Array(await readFile(file));
  const report = await validator.validateBytes(data, {
    uri: path.basename(file),
    maxIssues: 50,
    externalResourceFunction: (uri) =>
      readFile(path.join(path.dirname(file), decodeURIComponent(uri))).then((b) => new Uint8Array(b)),
  });
  const { numErrors, numWarnings, numInfos, messages } = report.issues;
  console.log(JSON.stringify({ file, numErrors, numWarnings, numInfos, messages }));
}

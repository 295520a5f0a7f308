/** In the Worker's bundle in place of `ajv-formats`, for the reason ./ajv.ts gives. */
export default function addFormats(): never {
  throw new Error("ajv-formats is left out of the Worker's bundle (src/mcp/left-out/ajv-formats.ts)");
}

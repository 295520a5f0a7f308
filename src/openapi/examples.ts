/**
 * Makes every identifier in /openapi.json show its example in renderers that do not follow a
 * `$ref` for one. Scalar (`/docs`) rendered `"id": null` in every example answer: it takes no
 * example through `{"$ref": "#/components/schemas/Id"}` nor through the generator's
 * `{"allOf": [{"$ref": …}, {"description": …}]}`, though the `Id` schema has one. OpenAPI 3.1
 * allows keywords beside a `$ref`, so, without changing what the document says:
 * - `allOf` of one reference and a description becomes the reference with the description beside it;
 * - a reference to a component schema that has an `example` carries that example beside it.
 * A pure function of the document, run once per document after compaction (./document.ts).
 */

type Json = Record<string, unknown>;

const SCHEMA_REF = /^#\/components\/schemas\/(.+)$/;

export function examplesBesideRefs<T extends object>(document: T): T {
  const doc = document as { paths?: Json; components?: { schemas?: Record<string, Json> } };
  const schemas = doc.components?.schemas ?? {};
  const exampleOf = (ref: unknown) => {
    const name = typeof ref === "string" ? SCHEMA_REF.exec(ref)?.[1] : undefined;
    return name === undefined ? undefined : schemas[name]?.example;
  };
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (typeof value !== "object" || value === null) return;
    const node = value as Json;
    const parts = node.allOf;
    if (Array.isArray(parts) && parts.length === 2) {
      const [target, annotation] = parts as [Json, Json];
      if (
        typeof target?.$ref === "string" &&
        Object.keys(target).length === 1 &&
        onlyDescription(annotation)
      ) {
        delete node.allOf;
        node.$ref = target.$ref;
        node.description = annotation.description;
      }
    }
    if (node.$ref !== undefined && node.example === undefined) {
      const example = exampleOf(node.$ref);
      if (example !== undefined) node.example = example;
    }
    for (const child of Object.values(node)) visit(child);
  };
  visit(doc.paths);
  for (const schema of Object.values(schemas)) visit(schema);
  return document;
}

const onlyDescription = (value: Json | undefined): value is { description: string } =>
  value !== undefined && Object.keys(value).length === 1 && typeof value.description === "string";

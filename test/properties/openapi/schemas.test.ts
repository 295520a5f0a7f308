/** What /openapi.json publishes of the records' schemas beyond what every operation shares. */
import { describe, expect, it } from "vitest";
import { openApiDocument, resolveParameters } from "../../helpers/openapi";

describe("/openapi.json", () => {
  it("documents the deployment record's enums and the status filter", async () => {
    const doc = await openApiDocument();
    const schemas = doc.components.schemas ?? {};
    const json = JSON.stringify(schemas);
    expect(schemas.DeploymentStatus).toMatchObject({
      enum: ["waiting", "queued", "in_progress", "succeeded", "failed", "cancelled"],
    });
    expect(json).toContain(JSON.stringify(["add", "remove", "replace", "move", "copy", "test"]));
    expect(json).toContain(JSON.stringify(["github", "gitlab", "bitbucket"]));
    expect(schemas.StackResourceStatus).toMatchObject({ enum: expect.arrayContaining(["create_complete"]) });
    const params = resolveParameters(doc, doc.paths["/v1/deployments"]?.get?.parameters ?? []);
    // The filter names every status (its items take one or several, comma-separated).
    const status = JSON.stringify(params.find((p) => p.name === "status"));
    for (const value of ["waiting", "queued", "in_progress", "succeeded", "failed", "cancelled"])
      expect(status).toContain(value);
  });
});

describe("template_id is a free string of 1–255 characters (§17)", () => {
  it("the OpenAPI document does not constrain template_id to the identifier pattern", async () => {
    const doc = await openApiDocument();
    const schema = doc.components.schemas?.StackResource as {
      properties: Record<string, Record<string, unknown>>;
    };
    const templateId = schema.properties.template_id;
    expect(templateId).toMatchObject({ type: "string", minLength: 1, maxLength: 255 });
    expect(templateId?.pattern).toBeUndefined();
  });
});

describe("what the API refuses of a schema-valid body, the schema says too", () => {
  it("IDs given twice: stack_ids and account_ids are uniqueItems", async () => {
    const doc = await openApiDocument();
    const schemas = (doc.components.schemas ?? {}) as Record<string, { properties: Record<string, unknown> }>;
    expect(schemas.DeploymentCreate?.properties.stack_ids).toMatchObject({ uniqueItems: true });
    expect(schemas.ProjectMemberAdd?.properties.account_ids).toMatchObject({ uniqueItems: true });
  });
});

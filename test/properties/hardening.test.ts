/**
 * What black-box and adversarial testing found (issue #10, API_CONTRACT §17): free
 * template names, the stack machine inside a deployment, cancel racing the engine, body
 * hygiene before anything executes. Normalized webhook URLs: test/integrations/webhookUrls.test.ts.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../src/schemas/deployment";
import { internal, internalOk, request } from "../helpers/api";
import type { ErrorBody } from "../helpers/expect";
import {
  createDeployment,
  createOrgWithOwner,
  createProject,
  createStack,
  unique,
} from "../helpers/factories";
import { openApiDocument } from "../helpers/openapi";
import { countRows } from "../helpers/rows";

type Deployment = DeploymentRecord;
const PATCH = [{ op: "add", path: "/services/web", value: { image: "web:1" } }];

async function setup() {
  const { owner } = await createOrgWithOwner();
  const project = await createProject(owner);
  const environmentId = project.default_environment_id;
  return { owner, project, environmentId };
}

const deploy = (environmentId: string, stackIds: string[]) =>
  createDeployment(environmentId, stackIds, { patch: PATCH });

const move = (id: string, body: Record<string, unknown>) =>
  internal<Deployment & ErrorBody>("PATCH", `/deployments/${id}`, body);

describe("template_id is a free string of 1–255 characters (§17)", () => {
  it("stacks and resources take engine template names; the public record reads them back", async () => {
    const { owner, environmentId } = await setup();
    const stack = await internal<{ id: string; template_id: string }>(
      "POST",
      `/environments/${environmentId}/stacks`,
      { name: unique("stack"), template_id: "tpl-web-1" },
    );
    expect([stack.status, stack.body.template_id]).toEqual([201, "tpl-web-1"]);

    const inherited = await internalOk<{ id: string; template_id: string }>(
      "POST",
      `/stacks/${stack.body.id}/resources`,
      { resource_type: "AWS::SQS::Queue", physical_id: "orders", status: "create_complete" },
    );
    expect(inherited.template_id).toBe("tpl-web-1");

    const longest = `t${"é".repeat(254)}`;
    for (const templateId of ["worker templates/α v2", longest, "x"]) {
      const res = await internal<{ id: string; template_id: string }>(
        "POST",
        `/stacks/${stack.body.id}/resources`,
        {
          resource_type: "AWS::Lambda::Function",
          physical_id: "fn",
          status: "create_in_progress",
          template_id: templateId,
        },
      );
      expect([res.status, res.body.template_id]).toEqual([201, templateId]);
      const read = await request<{ template_id: string }>("GET", `/v1/resources/${res.body.id}`, {
        key: owner.key,
      });
      expect([read.status, read.body.template_id]).toEqual([200, templateId]);
    }

    // A deployment of such a stack works end to end.
    const d = await deploy(environmentId, [stack.body.id]);
    expect(d.status).toBe("queued");
  });

  it("refuses an empty or over-long template_id on stacks and resources, writing nothing", async () => {
    const { project, environmentId } = await setup();
    const mine = { projectId: project.id };
    const stack = await createStack(environmentId, { template_id: "tpl-api" });
    const before = [await countRows("stacks", mine), await countRows("stack_resources", mine)];
    for (const templateId of ["", "t".repeat(256), 42]) {
      const s = await internal<ErrorBody>("POST", `/environments/${environmentId}/stacks`, {
        name: unique("stack"),
        template_id: templateId,
      });
      expect([s.status, s.body.code, s.body.cause?.[0]?.path]).toEqual([400, "bad_input", "template_id"]);
      const r = await internal<ErrorBody>("POST", `/stacks/${stack.id}/resources`, {
        resource_type: "AWS::SQS::Queue",
        physical_id: "q",
        status: "create_complete",
        template_id: templateId,
      });
      expect([r.status, r.body.code, r.body.cause?.[0]?.path]).toEqual([400, "bad_input", "template_id"]);
    }
    expect([await countRows("stacks", mine), await countRows("stack_resources", mine)]).toEqual(before);
  });

  it("a stack created without template_id still gets a new identifier", async () => {
    const { environmentId } = await setup();
    const stack = await createStack(environmentId);
    expect(stack.template_id).toMatch(/^[1-9A-HJ-NP-Za-km-z]{22}$/);
  });

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

describe("stack statuses inside a deployment (§17)", () => {
  it("a stack can fail before it starts; entering a final status finishes every unfinished stack", async () => {
    const { owner, environmentId } = await setup();
    const [a, b, c] = [
      await createStack(environmentId),
      await createStack(environmentId),
      await createStack(environmentId),
    ];
    const d = await deploy(environmentId, [a.id, b.id, c.id]);
    const started = await move(d.id, {
      status: "in_progress",
      stacks: [
        { id: a.id, status: "failed", status_reason: "template invalid" },
        { id: b.id, status: "in_progress" },
      ],
    });
    expect(started.status).toBe(200);
    expect(started.body.data.stacks?.map((s) => s.status)).toEqual(["failed", "in_progress", "queued"]);

    const done = await move(d.id, { status: "succeeded" });
    expect(done.status).toBe(200);
    const stacks = done.body.data.stacks ?? [];
    expect(stacks.map((s) => [s.id, s.status])).toEqual([
      [a.id, "failed"],
      [b.id, "succeeded"],
      [c.id, "succeeded"],
    ]);
    // The failed stack keeps its own time and reason; the others moved when the deployment did.
    expect(stacks[0]).toEqual(started.body.data.stacks?.[0]);
    expect(stacks[0]?.status_reason).toBe("template invalid");
    expect(stacks[1]?.timestamp).toBe(done.body.finished_at);
    expect(stacks[2]?.timestamp).toBe(done.body.finished_at);

    const read = await request<Deployment>("GET", `/v1/deployments/${d.id}`, { key: owner.key });
    expect(read.body.data.stacks?.some((s) => s.status === "queued" || s.status === "in_progress")).toBe(
      false,
    );
  });

  it("a report that finishes the deployment may name that status for its unfinished stacks, with reasons", async () => {
    const { environmentId } = await setup();
    const [a, b, c] = [
      await createStack(environmentId),
      await createStack(environmentId),
      await createStack(environmentId),
    ];
    const d = await deploy(environmentId, [a.id, b.id, c.id]);
    await move(d.id, { status: "in_progress", stacks: [{ id: b.id, status: "in_progress" }] });
    // a is still queued: queued → succeeded alone is no stack move, but it is the roll-up here.
    const done = await move(d.id, {
      status: "succeeded",
      stacks: [
        { id: a.id, status: "succeeded", status_reason: "nothing to change" },
        { id: b.id, status: "succeeded", status_reason: "applied" },
      ],
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.data.stacks?.map((s) => [s.id, s.status, s.status_reason, s.timestamp])).toEqual([
      [a.id, "succeeded", "nothing to change", done.body.finished_at],
      [b.id, "succeeded", "applied", done.body.finished_at],
      [c.id, "succeeded", undefined, done.body.finished_at],
    ]);

    // Another final status for a queued stack than the deployment's is still judged alone.
    const e = await deploy(environmentId, [a.id, b.id]);
    await move(e.id, { status: "in_progress" });
    const mixed = await move(e.id, {
      status: "failed",
      stacks: [{ id: a.id, status: "succeeded" }],
    });
    expect([mixed.status, mixed.body.code]).toEqual([409, "conflict"]);
  });

  it("a failed deployment fails its queued and running stacks", async () => {
    const { environmentId } = await setup();
    const [a, b] = [await createStack(environmentId), await createStack(environmentId)];
    const d = await deploy(environmentId, [a.id, b.id]);
    await move(d.id, { status: "in_progress", stacks: [{ id: a.id, status: "in_progress" }] });
    const failed = await move(d.id, { status: "failed" });
    expect(failed.status).toBe(200);
    expect(failed.body.data.stacks?.map((s) => [s.status, s.timestamp])).toEqual([
      ["failed", failed.body.finished_at],
      ["failed", failed.body.finished_at],
    ]);
  });

  it("refuses stack moves outside the stack machine with 409, changing nothing", async () => {
    const { environmentId } = await setup();
    const [a] = [await createStack(environmentId)];
    const d = await deploy(environmentId, [a.id]);
    await move(d.id, { status: "in_progress" });
    // queued → succeeded is not a stack move (a stack runs before it succeeds).
    const skip = await move(d.id, { status: "in_progress", stacks: [{ id: a.id, status: "succeeded" }] });
    expect([skip.status, skip.body.code]).toEqual([409, "conflict"]);
    await move(d.id, { status: "in_progress", stacks: [{ id: a.id, status: "in_progress" }] });
    const back = await move(d.id, { status: "in_progress", stacks: [{ id: a.id, status: "queued" }] });
    expect([back.status, back.body.code]).toEqual([409, "conflict"]);
    const after = await internalOk<Deployment>("PATCH", `/deployments/${d.id}`, { status: "in_progress" });
    expect(after.data.stacks?.[0]?.status).toBe("in_progress");
  });
});

describe("cancel racing the engine (§17)", () => {
  it("a cancel racing queued → in_progress always cancels; 409 only once final", async () => {
    const { owner, environmentId } = await setup();
    const stack = await createStack(environmentId);
    // Several races at once, the engine's move started 0–3 ms after the cancel, so the
    // engine's write lands between the cancel's read and its write in a good share of them
    // (on the code before the fix, about a quarter of these cancels answered 409).
    for (let round = 0; round < 5; round++) {
      const batch = await Promise.all(Array.from({ length: 8 }, () => deploy(environmentId, [stack.id])));
      await Promise.all(
        batch.map(async (d, i) => {
          const [cancel, engine] = await Promise.all([
            request<Deployment & ErrorBody>("PATCH", `/v1/deployments/${d.id}/cancel`, { key: owner.key }),
            new Promise((resolve) => setTimeout(resolve, i % 4)).then(() =>
              move(d.id, { status: "in_progress" }),
            ),
          ]);
          expect(cancel.status, cancel.raw).toBe(200);
          expect(cancel.body.status).toBe("cancelled");
          expect(cancel.body.data.stacks?.map((s) => s.status)).toEqual(["cancelled"]);
          // The engine either moved first (the cancel then went through after it) or found it cancelled.
          expect([200, 409]).toContain(engine.status);
          if (engine.status === 200) expect(cancel.body.started_at).toBe(engine.body.started_at);
          const row = await env.DB.prepare("SELECT status FROM deployments WHERE id = ?")
            .bind(d.id)
            .first<{ status: string }>();
          expect(row?.status).toBe("cancelled");
        }),
      );
    }
  });
});

describe("body hygiene before anything executes (§6, §17)", () => {
  /** `depth` nested arrays: `[[…]]`. */
  const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
  /** A deployment create body whose total depth is `depth` (body 1, data 2, patch 3, item 4, value 5…). */
  const deploymentBody = (stackId: string, depth: number) =>
    `{"stack_ids":["${stackId}"],"data":{"patch":[{"op":"add","path":"/x","value":${nested(depth - 4)}}]}}`;

  it("JSON up to 64 levels is accepted; 65 and 20,000 levels are 400 and write nothing", async () => {
    const { project, environmentId } = await setup();
    const stack = await createStack(environmentId);
    const post = (rawBody: string) =>
      request<ErrorBody & { data: unknown }>(
        "POST",
        `/internal/v1/environments/${environmentId}/deployments`,
        {
          rawBody,
          headers: { authorization: `Bearer ${env.ADMIN_TOKEN}`, "content-type": "application/json" },
        },
      );
    const ok = await post(deploymentBody(stack.id, 64));
    expect(ok.status, ok.raw).toBe(201);

    const before = await countRows("deployments", { projectId: project.id });
    for (const depth of [65, 20_000]) {
      const res = await post(deploymentBody(stack.id, depth));
      expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
      expect(res.body.message).toContain("64");
    }
    // The depth of a top-level array body counts the same way.
    const arr = await post(nested(65));
    expect([arr.status, arr.body.code]).toEqual([400, "bad_input"]);
    expect(await countRows("deployments", { projectId: project.id })).toBe(before);
  });

  it("brackets inside strings do not count towards the depth", async () => {
    const { owner } = await setup();
    const res = await request<{ description: string }>("POST", "/v1/projects", {
      key: owner.key,
      body: { name: unique("p"), description: `${"[{".repeat(200)}\\"` },
    });
    expect(res.status, res.raw).toBe(201);
  });

  it("a deep value on a public route is 400, not a 500 after the write", async () => {
    const { owner, project, environmentId } = await setup();
    const before = await countRows("variables", { projectId: project.id });
    const res = await request<ErrorBody>("POST", `/v1/environments/${environmentId}/variables`, {
      key: owner.key,
      rawBody: `{"name":"DEEP","type":"string","value":${nested(20_000)}}`,
      headers: { "content-type": "application/json" },
    });
    expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
    expect(await countRows("variables", { projectId: project.id })).toBe(before);
  });

  it("a charset other than utf-8 is 400, with or without a body; utf-8 in any spelling is accepted", async () => {
    const { owner, project } = await setup();
    const before = await countRows("projects", { orgId: owner.orgId });
    for (const contentType of [
      "application/json; charset=latin1",
      "application/json;charset=ISO-8859-1",
      'application/json; charset="utf-16"',
      "application/json; Charset=us-ascii",
    ]) {
      const res = await request<ErrorBody>("POST", "/v1/projects", {
        key: owner.key,
        rawBody: JSON.stringify({ name: unique("p") }),
        headers: { "content-type": contentType },
      });
      expect([res.status, res.body.code, res.body.cause?.[0]?.path]).toEqual([
        400,
        "bad_input",
        "header.content-type",
      ]);
    }
    expect(await countRows("projects", { orgId: owner.orgId })).toBe(before);
    // Without a body too: a bodyless write labelled with another charset executes nothing.
    const stack = await createStack(project.default_environment_id);
    const deployment = await deploy(project.default_environment_id, [stack.id]);
    for (const [method, path] of [
      ["PATCH", `/v1/deployments/${deployment.id}/cancel`],
      ["PATCH", `/v1/projects/${project.id}/disconnect`],
      ["DELETE", `/v1/projects/${project.id}`],
    ] as const) {
      const res = await request<ErrorBody>(method, path, {
        key: owner.key,
        headers: { "content-type": "application/json; charset=utf-16" },
      });
      expect([res.status, res.body.code, res.body.cause?.[0]?.path], `${method} ${path}`).toEqual([
        400,
        "bad_input",
        "header.content-type",
      ]);
    }
    const after = await request<{ connection_status: string }>("GET", `/v1/projects/${project.id}`, {
      key: owner.key,
    });
    expect(after.body.connection_status).toBe("connected");
    const unchanged = await request<Deployment>("GET", `/v1/deployments/${deployment.id}`, {
      key: owner.key,
    });
    expect(unchanged.body.status).toBe("queued");
    // RFC 9110 media types: spaces around `;`, an empty parameter, any case.
    for (const contentType of [
      "application/json; charset=utf-8",
      'application/json;CHARSET="UTF-8"',
      "application/json ; charset=utf-8",
      "application/json;",
      "Application/JSON ;charset=utf-8 ;",
    ]) {
      const res = await request("POST", "/v1/projects", {
        key: owner.key,
        rawBody: JSON.stringify({ name: unique("p") }),
        headers: { "content-type": contentType },
      });
      expect(res.status, `${contentType} → ${res.raw}`).toBe(201);
    }
  });

  it("an unpaired surrogate in any key or string is 400 naming the field; a pair is fine", async () => {
    const { owner, project, environmentId } = await setup();
    const stack = await createStack(environmentId);
    const counts = async () => [
      await countRows("projects", { orgId: owner.orgId }),
      await countRows("variables", { projectId: project.id }),
      await countRows("deployments", { projectId: project.id }),
    ];
    const before = await counts();
    const cases: Array<[string, string, string, string]> = [
      ["/v1/projects", '{"name":"a\\ud800b"}', owner.key, "name"],
      ["/v1/projects", '{"name":"ok","description":"x\\udc00"}', owner.key, "description"],
      ["/v1/projects", '{"name":"tail\\ud83d"}', owner.key, "name"],
      [
        `/v1/environments/${environmentId}/variables`,
        '{"name":"V","type":"string","value":"\\udfff\\ud800"}',
        owner.key,
        "value",
      ],
      [
        `/internal/v1/environments/${environmentId}/deployments`,
        `{"stack_ids":["${stack.id}"],"data":{"patch":[{"op":"add","path":"/x","value":{"k\\ud800":1}}]}}`,
        "",
        // The path names the key with U+FFFD in the surrogate's place: an answer holds no
        // ill-formed string (a strict UTF-8 client could not read one).
        "data.patch.0.value.k\ufffd",
      ],
    ];
    for (const [path, rawBody, key, field] of cases) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (!key) headers.authorization = `Bearer ${env.ADMIN_TOKEN}`;
      const res = await request<ErrorBody>("POST", path, { key, rawBody, headers });
      expect([res.status, res.body.code], rawBody).toEqual([400, "bad_input"]);
      expect(res.body.cause?.[0]?.path).toBe(field);
    }
    expect(await counts()).toEqual(before);

    const pair = await request<{ name: string; description: string }>("POST", "/v1/projects", {
      key: owner.key,
      rawBody: `{"name":"${unique("p")}","description":"rocket \\ud83d\\ude80"}`,
      headers: { "content-type": "application/json" },
    });
    expect([pair.status, pair.body.description]).toEqual([201, "rocket 🚀"]);
  });
});

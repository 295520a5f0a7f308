/**
 * What black-box and adversarial testing found (issue #10, API_CONTRACT §17), where it holds
 * across operations: free template names on stacks and resources, body hygiene before anything
 * executes. The stack machine inside a deployment:
 * test/routes/internal/deployments/internalUpdateDeployment.test.ts; cancel racing the engine:
 * test/properties/races/cancel-racing-engine.test.ts; normalized webhook URLs:
 * test/properties/webhooks/webhook-urls.test.ts.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../src/schemas/deployment";
import { internal, internalOk, request } from "../helpers/api";
import { deploy } from "../helpers/engine";
import type { ErrorBody } from "../helpers/expect";
import { createProjectEnvironment, createStack, unique } from "../helpers/factories";
import { countRows } from "../helpers/rows";

type Deployment = DeploymentRecord;

describe("template_id is a free string of 1–255 characters (§17)", () => {
  it("stacks and resources take engine template names; the public record reads them back", async () => {
    const { owner, environmentId } = await createProjectEnvironment();
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
    const { project, environmentId } = await createProjectEnvironment();
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
});

describe("body hygiene before anything executes (§6, §17)", () => {
  /** `depth` nested arrays: `[[…]]`. */
  const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
  /** A deployment create body whose total depth is `depth` (body 1, data 2, patch 3, item 4, value 5…). */
  const deploymentBody = (stackId: string, depth: number) =>
    `{"stack_ids":["${stackId}"],"data":{"patch":[{"op":"add","path":"/x","value":${nested(depth - 4)}}]}}`;

  it("JSON up to 64 levels is accepted; 65 and 20,000 levels are 400 and write nothing", async () => {
    const { project, environmentId } = await createProjectEnvironment();
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
      // A validation failure's cause (§6), naming the value that opens level 65: data.patch.0.value.0…
      const level65 = ["data", "patch", "0", "value", ...Array(60).fill("0")].join(".");
      expect(res.body.cause).toEqual([{ path: level65, message: "Nested deeper than 64 levels." }]);
    }
    // The depth of a top-level array body counts the same way.
    const arr = await post(nested(65));
    expect([arr.status, arr.body.code]).toEqual([400, "bad_input"]);
    expect(arr.body.cause?.[0]?.path).toBe(Array(64).fill("0").join("."));
    expect(await countRows("deployments", { projectId: project.id })).toBe(before);
  });

  it("a number beyond a 64-bit float (1e400) is 400 where any JSON value is taken, not stored as null", async () => {
    const { owner, project, environmentId } = await createProjectEnvironment();
    const stack = await createStack(environmentId);
    const before = await countRows("deployments", { projectId: project.id });
    for (const value of ["1e400", "-1e999", "[1, 2e308]"]) {
      const rawBody = `{"stack_ids":["${stack.id}"],"data":{"patch":[{"op":"add","path":"/x","value":${value}}]}}`;
      const res = await request<ErrorBody>("POST", `/v1/environments/${environmentId}/deployments`, {
        key: owner.key,
        rawBody,
        headers: { "content-type": "application/json" },
      });
      expect([res.status, res.body.code], res.raw).toEqual([400, "bad_input"]);
      expect(JSON.stringify(res.body.cause)).toContain("data.patch.0.value");
    }
    expect(await countRows("deployments", { projectId: project.id })).toBe(before);
    // The largest finite double, and a long integer, are numbers JSON can write back: taken.
    const fine = await request<DeploymentRecord>("POST", `/v1/environments/${environmentId}/deployments`, {
      key: owner.key,
      rawBody: `{"stack_ids":["${stack.id}"],"data":{"patch":[{"op":"add","path":"/x","value":[1.7976931348623157e308,123456789012345678901234567890]}]}}`,
      headers: { "content-type": "application/json" },
    });
    expect(fine.status, fine.raw).toBe(201);
    expect(fine.body.data.patch[0]?.value).toEqual([1.7976931348623157e308, 1.2345678901234568e29]);
  });

  it("brackets inside strings do not count towards the depth", async () => {
    const { owner } = await createProjectEnvironment();
    const res = await request<{ description: string }>("POST", "/v1/projects", {
      key: owner.key,
      body: { name: unique("p"), description: `${"[{".repeat(200)}\\"` },
    });
    expect(res.status, res.raw).toBe(201);
  });

  it("a deep value on a public route is 400, not a 500 after the write", async () => {
    const { owner, project, environmentId } = await createProjectEnvironment();
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
    const { owner, project } = await createProjectEnvironment();
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
    const { owner, project, environmentId } = await createProjectEnvironment();
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

describe("a key twice in one object is 400 before anything executes (§22)", () => {
  const post = (path: string, rawBody: string, key: string, headers: Record<string, string> = {}) =>
    request<ErrorBody>("POST", path, {
      key,
      rawBody,
      headers: {
        "content-type": "application/json",
        ...(key ? {} : { authorization: `Bearer ${env.ADMIN_TOKEN}` }),
        ...headers,
      },
    });

  it("names the key by its dotted path, at any depth, however the key is spelled", async () => {
    const { owner, project, environmentId } = await createProjectEnvironment();
    const stack = await createStack(environmentId);
    const counts = async () => [
      await countRows("projects", { orgId: owner.orgId }),
      await countRows("notification_integrations", { projectId: project.id }),
      await countRows("deployments", { projectId: project.id }),
    ];
    const before = await counts();
    const integrations = `/v1/projects/${project.id}/notification-integrations`;
    const cases: Array<[string, string, string, string]> = [
      // The classic smuggle: a proxy reading the first value sees a number, JSON.parse the last.
      ["/v1/projects", '{"name":123,"name":"x"}', owner.key, "name"],
      ["/v1/projects", `{"name":"${unique("p")}","description":null,"name":"y"}`, owner.key, "name"],
      // An escape spells the same key: `\u006e` is `n`.
      ["/v1/projects", '{"name":"a","\\u006eame":"b"}', owner.key, "name"],
      ["/v1/projects", '{"na\\"me":1,"na\\"me":2}', owner.key, 'na"me'],
      [
        integrations,
        '{"type":"webhook","url":"https://hooks.example.com/d","configuration":{"changelog":true,"changelog":false}}',
        owner.key,
        "configuration.changelog",
      ],
      [
        `/internal/v1/environments/${environmentId}/deployments`,
        `{"stack_ids":["${stack.id}"],"data":{"patch":[{"op":"add","path":"/x","value":1},{"op":"add","op":"remove","path":"/y"}]}}`,
        "",
        "data.patch.1.op",
      ],
    ];
    for (const [path, rawBody, key, field] of cases) {
      const res = await post(path, rawBody, key);
      expect([res.status, res.body.code], rawBody).toEqual([400, "bad_input"]);
      expect(res.body.cause, rawBody).toEqual([{ path: field, message: expect.stringMatching(/once/) }]);
    }
    expect(await counts()).toEqual(before);
  });

  it("the same key in two objects, or as a value, is no duplicate", async () => {
    const { owner, environmentId } = await createProjectEnvironment();
    const stack = await createStack(environmentId);
    const name = unique("name");
    const project = await post("/v1/projects", `{"name":"${name}","description":"name"}`, owner.key);
    expect([project.status, project.raw]).toEqual([201, expect.any(String)]);
    const deployment = await post(
      `/internal/v1/environments/${environmentId}/deployments`,
      `{"stack_ids":["${stack.id}"],"data":{"patch":[{"op":"add","path":"/a","value":{"op":1}},{"op":"add","path":"/b","value":[{"k":1},{"k":2}]}]}}`,
      "",
    );
    expect(deployment.status, deployment.raw).toBe(201);
  });

  it("is refused before the Idempotency-Key is used: the mended request runs under the same key", async () => {
    const { owner } = await createProjectEnvironment();
    const key = unique("dup");
    const name = unique("p");
    const refused = await post("/v1/projects", `{"name":1,"name":"${name}"}`, owner.key, {
      "idempotency-key": key,
    });
    expect(refused.status).toBe(400);
    const mended = await post("/v1/projects", `{"name":"${name}"}`, owner.key, { "idempotency-key": key });
    expect([mended.status, mended.headers.get("idempotent-replayed")]).toEqual([201, null]);
  });
});

/**
 * Every GET of /v1, walked from /openapi.json and counted on the real bindings
 * (test/helpers/work-counts.ts): a warm key's read is one D1 round trip, so a new read cannot add
 * one; the reveals, which write their audit entry first, are the exception.
 */
import { describe, expect, it } from "vitest";
import { internalOk, request } from "../../helpers/api";
import { createStream } from "../../helpers/audit-streams";
import {
  createComponent,
  createIntegration,
  createOrgWithOwner,
  createResource,
} from "../../helpers/factories";
import { createTrust } from "../../helpers/oidc";
import { openApiDocument } from "../../helpers/openapi";
import { freshKey, measure, projectWithDeployment } from "../../helpers/work-counts";

describe("every read of /v1, walked from /openapi.json", () => {
  /** What a warm key's read costs: one limiter call, one session on a replica, one round trip. */
  const ONE_ROUND_TRIP = { d1RoundTrips: 1, limiterCalls: 1, sessions: ["first-unconstrained"] };
  /** The exception: a reveal records its audit entry (a write) before the value leaves (an export too). */
  const REVEALS = [
    "/v1/variables/{variable_id}/value",
    "/v1/environments/{environment_id}/variables/export",
    "/v1/components/{component_id}/variables/export",
  ];
  const WAIT = "/v1/deployments/{id}/wait";

  it("a warm key's GET is one D1 round trip (the lookup that authorizes it and its rows in one batch; a reveal and a wait that times out one more), and a hidden parent's 404 costs no more", async () => {
    const { org, owner } = await createOrgWithOwner();
    const { project, environmentId, stack } = await projectWithDeployment(owner);
    const component = await createComponent(environmentId);
    const resource = await createResource(stack.id);
    // No flag on: the event below reaches no integration, so nothing is sent to a host name.
    const integration = await createIntegration(project.id, { configuration: {} });
    const event = await internalOk<{ id: string }>("POST", `/projects/${project.id}/events`, {
      type: "changelog.created",
    });
    const variable = await request<{ id: string }>("POST", `/v1/environments/${environmentId}/variables`, {
      key: owner.key,
      body: { name: "COUNTED", type: "secret", value: "v" },
    });
    // Version 1 of the component's variables too (the environment's is the create above).
    await request("POST", `/v1/components/${component.id}/variables`, {
      key: owner.key,
      body: { name: "COUNTED", type: "string", value: "v" },
    });
    // Path parameters by name, and `{id}` by the collection segment before it.
    const ids: Record<string, string> = {
      org_id: org.id,
      project_id: project.id,
      environment_id: environmentId,
      component_id: component.id,
      stack_id: stack.id,
      member_id: owner.accountId,
      integration_id: integration.id,
      event_id: event.id,
      variable_id: variable.body.id,
      version: "1",
      resources: resource.id,
      deployments: stack.deploymentId,
      "api-keys": owner.keyId,
      "oidc-trusts": (await createTrust(owner)).id,
      "audit-streams": (await createStream(owner, "https://siem.example.com/in", { enabled: false })).id,
    };
    const fill = (template: string) =>
      template.replace(/\{(\w+)\}/g, (_, name: string, at: number) => {
        const collection =
          template
            .slice(0, at - 1)
            .split("/")
            .pop() ?? "";
        const id = name === "id" ? ids[collection] : ids[name];
        if (!id) throw new Error(`no id for {${name}} in ${template}`);
        return id;
      });
    const doc = await openApiDocument();
    const reads = Object.keys(doc.paths).filter((path) => path.startsWith("/v1/") && doc.paths[path]?.get);
    expect(reads.length).toBeGreaterThan(25);

    const key = await freshKey(org.id, owner.accountId);
    await measure("/v1/projects", key); // warms the key
    for (const template of reads) {
      const expected =
        template === REVEALS[0]
          ? { ...ONE_ROUND_TRIP, d1Statements: 2, d1RoundTrips: 2 }
          : REVEALS.includes(template)
            ? // The lookup, the scope's names and sizes and its version in one batch; then the
              // entry with the first page of values (of a scope of one page: all of them).
              { ...ONE_ROUND_TRIP, d1Statements: 5, d1RoundTrips: 2 }
            : template === WAIT
              ? // A wait on the (queued) deployment waits out its shortest timeout: its lookup, and
                // as its time is up one read on the primary (a change whose feed notice was lost).
                {
                  ...ONE_ROUND_TRIP,
                  d1Statements: 2,
                  d1RoundTrips: 2,
                  sessions: ["first-unconstrained", "first-primary"],
                }
              : ONE_ROUND_TRIP;
      const path = template === WAIT ? `${fill(template)}?timeout=1` : fill(template);
      expect(await measure(path, key), template).toMatchObject({ status: 200, ...expected });
    }

    // Another organization's key: every read of a path with an id of this one is 404, at most as dear.
    const other = await createOrgWithOwner();
    const outsider = await freshKey(other.org.id, other.owner.accountId);
    await measure("/v1/projects", outsider); // warms the key
    for (const template of reads.filter((path) => path.includes("{"))) {
      const hidden = await measure(fill(template), outsider);
      expect(hidden.status, template).toBe(404);
      expect(hidden.d1RoundTrips, template).toBeLessThanOrEqual(1);
    }
  });
});

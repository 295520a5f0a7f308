/**
 * API_CONTRACT §32 "Once completed": webhooks and audit streams go on without a gap. A project's
 * integration gets the events of before and after the move, each once; the organization's audit
 * stream delivers every sequence from 1 to its last, the move's two entries in their places, and
 * stays caught up; both objects now read the organization where it is.
 */
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  createStream,
  readStream,
  receiverBucket,
  sequencesReceived,
  eventually as until,
} from "../../helpers/audit-streams";
import { createOrgWithOwnerIn } from "../../helpers/databases";
import { deploy, reportOk } from "../../helpers/engine";
import { createProject, createStack, unique } from "../../helpers/factories";
import { auditActions, moveOrg } from "../../helpers/moves";
import { allowTheLocalReceiver, eventually, hook, integrate, received } from "../../helpers/webhooks";

allowTheLocalReceiver();

describe("webhooks and audit streams across a move", () => {
  for (const [from, to] of [
    ["DB", "DB_ORG_2"],
    ["DB_ORG_2", "DB"],
  ] as const) {
    it(`${from} → ${to}: every event delivered once, every audit sequence streamed, none skipped`, async () => {
      const { owner } = await createOrgWithOwnerIn(from);
      const project = await createProject(owner);
      const stack = await createStack(project.default_environment_id);
      const bucket = unique("hooks");
      const integration = await integrate(project.id, hook(bucket), { deployments_succeeded: true });
      const streamed = receiverBucket();
      const stream = await createStream(owner, streamed.url, { from: "start" });

      const succeed = async () => {
        const d = await deploy(project.default_environment_id, [stack.id]);
        await reportOk(d.id, { status: "in_progress" });
        await reportOk(d.id, { status: "succeeded" });
        return d.id;
      };
      const before = await succeed();
      await eventually(async () => expect((await received(bucket)).length).toBe(1));
      await moveOrg(owner.orgId, to);
      const after = await succeed();

      const deliveredIds = async () =>
        (await received(bucket)).map(
          (r) =>
            (
              new Webhook(integration.signing_secret).verify(r.body, r.headers) as {
                data: { deployment: { id: string } };
              }
            ).data.deployment.id,
        );
      await eventually(async () => expect(await deliveredIds()).toEqual([before, after]));

      const entries = await auditActions(owner);
      const last = entries.at(-1)?.sequence ?? 0;
      expect(entries.map((entry) => entry.action)).toEqual(
        expect.arrayContaining(["internal.moveOrganization", "internal.completeMove"]),
      );
      await until(
        async () => readStream(owner, stream.id),
        (s) => s.delivered_through === last && s.pending === 0,
        20_000,
      );
      expect((await readStream(owner, stream.id)).delivered_through).toBe(last);
      const sequences = await sequencesReceived(streamed.bucket);
      expect([...new Set(sequences)]).toEqual(Array.from({ length: last }, (_, i) => i + 1));
      expect((await readStream(owner, stream.id)).last_error).toBeNull();

      // And the next entry, written in the new database, follows.
      expect(
        (await request("POST", "/v1/projects", { key: owner.key, body: { name: unique("next") } })).status,
      ).toBe(201);
      await until(
        async () => readStream(owner, stream.id),
        (s) => s.delivered_through === last + 1,
        20_000,
      );
      expect((await readStream(owner, stream.id)).delivered_through).toBe(last + 1);
    }, 90_000);
  }
});

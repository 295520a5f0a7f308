import { once } from "../../lib/once";
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { AuditStreamSchema, CreatedAuditStreamSchema } from "../../schemas/audit-stream";

export { AuditStreamSchema, CreatedAuditStreamSchema };

/** Built by the list operation only: a read of one record builds no envelope. */
export const auditStreamListSchema = once(() => envelope(AuditStreamSchema, "AuditStreamList"));

export const OrgParams = idParams("org_id");
export const StreamParams = idParams("id");

/** Who may, for every operation of a stream (API_CONTRACT §30). */
export const WHO_MAY =
  "Org `owner` or `admin` (a member, or a key restricted to projects, is `403 unauthorized`); another organization's stream is `404`.";

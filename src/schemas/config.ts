/**
 * The configuration each deployment runs with (API_CONTRACT §24) as it is read back (names and
 * types; values for the engine), and a diff of two. What the record pins (`config`, the versions)
 * is the record's own (./deployment.ts): a deployment read builds none of these.
 */
import * as z from "zod";
import { VARIABLE_TYPES } from "../db/values";
import { IdSchema, InlineIdSchema } from "../openapi/primitives";

// As the record's pins (./deployment.ts), defined here too so that a config read builds no record.
const VersionNumber = z.number().int().min(0);
const VariableType = z.enum(VARIABLE_TYPES);
const ConfigVariable = z.object({ name: z.string(), type: VariableType });

export const DeploymentConfigRecordSchema = z
  .object({
    deployment_id: IdSchema,
    environment: z.object({
      id: InlineIdSchema,
      version: VersionNumber,
      variables: z.array(ConfigVariable),
    }),
    components: z.array(
      z.object({
        id: InlineIdSchema,
        name: z.string(),
        version: VersionNumber,
        variables: z.array(ConfigVariable),
      }),
    ),
  })
  .openapi("DeploymentConfig", {
    description:
      "Exactly the variables (names and types, sorted by name) each scope held right after the version the " +
      "deployment pins: what it deploys.",
  });

/** The engine's read: each variable with its value. */
const ConfigVariableWithValue = ConfigVariable.extend({ value: z.string() });
export const InternalDeploymentConfigSchema = DeploymentConfigRecordSchema.extend({
  environment: DeploymentConfigRecordSchema.shape.environment.extend({
    variables: z.array(ConfigVariableWithValue),
  }),
  components: z.array(
    z.object({
      id: InlineIdSchema,
      name: z.string(),
      version: VersionNumber,
      variables: z.array(ConfigVariableWithValue),
    }),
  ),
});

export const ConfigDiffChangeSchema = z.object({
  scope: z.object({ type: z.enum(["environment", "component"]), id: InlineIdSchema }),
  name: z.string(),
  action: z.enum(["created", "updated", "deleted"]),
  type: z.object({ from: VariableType.nullable(), to: VariableType.nullable() }),
  value_changed: z.boolean().openapi({
    description:
      "For a `string` on both sides, whether the values differ; for a name that is `secret` or `secure_string` on " +
      "either side, whether a value was written to it between the two versions, whatever the value.",
  }),
});

export const ConfigDiffSchema = z
  .object({
    deployment_id: IdSchema,
    against: z.string().openapi({ description: "`current`, or the other deployment's ID." }),
    changes: z.array(ConfigDiffChangeSchema),
  })
  .openapi("DeploymentConfigDiff");

export type DeploymentConfigRecord = z.infer<typeof DeploymentConfigRecordSchema>;
export type InternalDeploymentConfig = z.infer<typeof InternalDeploymentConfigSchema>;
export type ConfigDiffChange = z.infer<typeof ConfigDiffChangeSchema>;
export type ConfigDiff = z.infer<typeof ConfigDiffSchema>;

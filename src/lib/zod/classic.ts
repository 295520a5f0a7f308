/**
 * zod/v4/classic/external.js, the namespace `z`, less `locales`, the schema compiler and
 * `fromJSONSchema` (./index.ts says why).
 */
export * from "../../../node_modules/zod/v4/classic/checks.js";
export * as coerce from "../../../node_modules/zod/v4/classic/coerce.js";
export * from "../../../node_modules/zod/v4/classic/compat.js";
export { deepPartial } from "../../../node_modules/zod/v4/classic/deep-partial.js";
export * from "../../../node_modules/zod/v4/classic/errors.js";
export { input, output } from "../../../node_modules/zod/v4/classic/in-out.js";
export * as iso from "../../../node_modules/zod/v4/classic/iso.js";
export {
  ZodISODate,
  ZodISODateTime,
  ZodISODuration,
  ZodISOTime,
} from "../../../node_modules/zod/v4/classic/iso.js";
export * from "../../../node_modules/zod/v4/classic/parse.js";
export * from "../../../node_modules/zod/v4/classic/schemas.js";
export {
  $brand,
  $input,
  $output,
  clone,
  config,
  flattenError,
  formatError,
  getDiscriminatedOption,
  globalRegistry,
  memoizer,
  NEVER,
  prettifyError,
  regexes,
  registry,
  TimePrecision,
  toZod,
  treeifyError,
  util,
} from "../../../node_modules/zod/v4/core/index.js";
export { toJSONSchema } from "../../../node_modules/zod/v4/core/json-schema-processors.js";
export * as core from "./core";

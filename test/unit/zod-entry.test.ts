/**
 * The Worker's zod entry (src/lib/zod/index.ts, what "zod" resolves to in the bundle and the
 * tests) is zod's own entry less exactly what it means to leave out, and its schemas are zod's.
 * A zod upgrade that adds an export fails here until the entry has it too.
 */

import { z as appZod } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import * as full from "zod/v4";
import * as lite from "../../src/lib/zod";

const LEFT_OUT = ["locales", "fromJSONSchema", "compile", "withParser", "INVALID"];
const LEFT_OUT_OF_CORE = ["locales", "compile", "compileFn", "withParser", "INVALID"];
const compilerErrors = (name: string) => name.startsWith("ZodCompile");

const names = (namespace: object, leftOut: string[]) =>
  Object.keys(namespace)
    .filter((name) => !leftOut.includes(name) && !compilerErrors(name))
    .sort();

describe("the Worker's zod entry", () => {
  it("exports every name of zod's entry but the ones it leaves out", () => {
    expect(names(lite, [])).toEqual(names(full, LEFT_OUT));
    expect(names(lite.z, [])).toEqual(names(full.z, LEFT_OUT));
    expect(names(lite.core, [])).toEqual(names(full.core, LEFT_OUT_OF_CORE));
  });

  it("leaves them out, and is the zod the app's schemas are built with", () => {
    expect(appZod).toBe(lite.z);
    for (const name of LEFT_OUT) expect(name in lite.z).toBe(false);
    for (const name of LEFT_OUT_OF_CORE) expect(name in lite.core).toBe(false);
  });

  it("is zod's own modules: the same classes, the same registry, English messages", () => {
    expect(lite.z.ZodType).toBe(full.z.ZodType);
    expect(lite.z.globalRegistry).toBe(full.z.globalRegistry);
    const result = lite.z.string().min(2).safeParse("a");
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe("Too small: expected string to have >=2 characters");
  });
});

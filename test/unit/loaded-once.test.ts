/**
 * src/lib/once.ts `loadedOnce`/`loadedOncePer`: what a dynamic import makes, kept once made, and
 * never a pending promise shared between callers (in workerd a request that awaits another
 * request's pending load runs on in that request's I/O context; `npm run check:deploy` sends
 * concurrent first requests to the deployed build for that).
 */
import { describe, expect, it } from "vitest";
import { loadedOnce, loadedOncePer } from "../../src/lib/once";

/** A load whose calls are counted and settled by hand, in any order. */
function manualLoads<T>() {
  const calls: { resolve: (value: T) => void; reject: (error: Error) => void; promise: Promise<T> }[] = [];
  const load = () => {
    let resolve!: (value: T) => void;
    let reject!: (error: Error) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    calls.push({ resolve, reject, promise });
    return promise;
  };
  /** The `i`th call of the load. */
  const call = (i: number) => {
    const made = calls[i];
    if (!made) throw new Error(`no load number ${i}`);
    return made;
  };
  return { calls, call, load };
}

describe("loadedOnce", () => {
  it("gives each concurrent first caller a promise of its own, from a load of its own", async () => {
    const { calls, call, load } = manualLoads<object>();
    const get = loadedOnce(load);
    const [a, b] = [get(), get()];
    expect(calls).toHaveLength(2);
    expect(a).not.toBe(b);
    for (const call of calls) expect([a, b]).not.toContain(call.promise);
    // The second load finishes first: its value is the one kept, and both callers get it.
    const [first, second] = [{ n: 1 }, { n: 2 }];
    call(1).resolve(second);
    expect(await b).toBe(second);
    call(0).resolve(first);
    expect(await a).toBe(second);
    expect(await get()).toBe(second);
    expect(calls).toHaveLength(2);
  });

  it("keeps nothing from a load that failed: the next call loads again", async () => {
    const { calls, call, load } = manualLoads<string>();
    const get = loadedOnce(load);
    const failed = get();
    call(0).reject(new Error("module threw"));
    await expect(failed).rejects.toThrow("module threw");
    const next = get();
    expect(calls).toHaveLength(2);
    call(1).resolve("loaded");
    expect(await next).toBe("loaded");
    expect(await get()).toBe("loaded");
    expect(calls).toHaveLength(2);
  });
});

describe("loadedOncePer", () => {
  it("keeps one value per key, each loaded by its own callers", async () => {
    const loads: object[] = [];
    const get = loadedOncePer(async (key: object) => {
      loads.push(key);
      return { of: key };
    });
    const [x, y] = [{}, {}];
    const [x1, x2, y1] = await Promise.all([get(x), get(x), get(y)]);
    expect(x1).toBe(x2);
    expect(x1.of).toBe(x);
    expect(y1.of).toBe(y);
    expect(await get(x)).toBe(x1);
    expect(loads).toEqual([x, x, y]);
  });
});

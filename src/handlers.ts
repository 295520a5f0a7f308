/**
 * The queue's and the cron's handlers, loaded on their first event, not when the Worker starts,
 * and kept once loaded: later events import nothing (test/setup.ts loads them first).
 */
import { loadedOnce } from "./lib/once";

export const loadConsumer = loadedOnce(() => import("./consumer"));
export const loadCron = loadedOnce(() => import("./cron"));

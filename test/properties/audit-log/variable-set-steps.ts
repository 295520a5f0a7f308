/**
 * The guard's steps for variable sets (API_CONTRACT §18; test/properties/audit-log/guard.test.ts),
 * by operationId. They run after the single-variable steps, whose versions they restore.
 */
import { call, type Step, VALUE } from "../../helpers/audit-log";

const change =
  (kind: "environment" | "component", id: (s: Parameters<Step>[0]) => string): Step =>
  async (s) => {
    const res = await call(`PATCH`, `/v1/${kind}s/${id(s)}/variables`, {
      key: s.owner.key,
      body: { variables: { SET_BY_CHANGE: { type: "secret", value: VALUE() } } },
    });
    return {
      res,
      actor: s.owner,
      expect: { target: kind, targetId: id(s), projectId: s.project.id, changed: ["SET_BY_CHANGE"] },
    };
  };

/** Back to version 1: the change above (and, in the environment, the replace and delete) undone. */
const restore =
  (kind: "environment" | "component", id: (s: Parameters<Step>[0]) => string): Step =>
  async (s) => {
    const res = await call("POST", `/v1/${kind}s/${id(s)}/variables/versions/1/restore`, {
      key: s.owner.key,
    });
    return {
      res,
      actor: s.owner,
      expect: { target: kind, targetId: id(s), projectId: s.project.id, changed: ["SET_BY_CHANGE"] },
    };
  };

const exported =
  (kind: "environment" | "component", id: (s: Parameters<Step>[0]) => string): Step =>
  async (s) => {
    const res = await call("GET", `/v1/${kind}s/${id(s)}/variables/export`, { key: s.owner.key });
    return {
      res,
      actor: s.owner,
      expect: { target: kind, targetId: id(s), projectId: s.project.id, changed: ["names"] },
    };
  };

const env = (s: Parameters<Step>[0]) => s.envId;
const component = (s: Parameters<Step>[0]) => s.componentId;

export const VARIABLE_SET_STEPS: Record<string, Step> = {
  applyEnvironmentVariableChanges: change("environment", env),
  restoreEnvironmentVariableVersion: restore("environment", env),
  exportEnvironmentVariables: exported("environment", env),
  applyComponentVariableChanges: change("component", component),
  restoreComponentVariableVersion: restore("component", component),
  exportComponentVariables: exported("component", component),
};

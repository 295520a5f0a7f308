// The action's entry point (action.yml `runs.main`: dist/index.js, bundled from here).
import { run } from "./main.js";

await run();

import {relaunchWithCoreThreadpool} from "../core/node/engine/relaunchWithCoreThreadpool.js";
import {reportWebModeFailure, runWebMode} from "./runWebMode.js";

await relaunchWithCoreThreadpool();
runWebMode(process.argv.slice(2)).catch(reportWebModeFailure);

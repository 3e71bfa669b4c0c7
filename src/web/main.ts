import {reportWebModeFailure, runWebMode} from "./runWebMode.js";

runWebMode(process.argv.slice(2)).catch(reportWebModeFailure);

import {reportWebModeFailure, runWebMode} from "./runWebMode.js";

// The core runs in a child process that WebCoreProcess starts with the core's thread pool: this one only serves the page.
runWebMode(process.argv.slice(2)).catch(reportWebModeFailure);

#!/usr/bin/env node
// `npm start`, for plain `node`: the desktop app, or web mode where it cannot run, from the compiled
// bundle (bin/cliBundle.mjs; rebuilt here first when a source changed since), as bin/web.mjs.
import {runBundleEntry} from "./cliBundle.mjs";

await runBundleEntry("start", "cleanroom start");

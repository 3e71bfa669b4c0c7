#!/usr/bin/env node
// `npm run web`, for plain `node`: web mode from the compiled bundle (bin/cliBundle.mjs; rebuilt here
// first when a source changed since), so that neither its process nor its core process loads tsx.
// An ES module, unlike bin/cleanroom.cjs: this process serves the page and never runs the core, which
// WebCoreProcess starts with the core's thread pool in its environment.
import {runBundleEntry} from "./cliBundle.mjs";

await runBundleEntry("web", "cleanroom web");

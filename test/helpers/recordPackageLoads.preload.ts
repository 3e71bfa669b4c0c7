// `node --import` this into a spawned CLI: every module that process (and the processes it starts
// with the same preload) resolves is appended, one URL a line, to the file RECORD_PACKAGE_LOADS_TO
// names, so that a test can tell which packages a command loaded. The hook runs on Node's loader
// thread, which takes plain JavaScript: it is given as source.
import {register} from "node:module";

const hook = `
import fs from "node:fs";
export async function resolve(specifier, context, next) {
    const resolved = await next(specifier, context);
    fs.appendFileSync(process.env.RECORD_PACKAGE_LOADS_TO, resolved.url + "\\n");
    return resolved;
}`;
if (process.env.RECORD_PACKAGE_LOADS_TO != null)
    register(`data:text/javascript,${encodeURIComponent(hook)}`);

#!/usr/bin/env -S npx tsx
import {runCliProgram} from "../../src/cli/runCliProgram.js";
import {registerAuditCommand} from "./auditCommand.js";
import {registerSimCloudCommand} from "./simCloudCommand.js";

// Developer tools, not shipped with the app: `npm run sim-cloud -- …`, `npm run audit-endpoint -- …`.
await runCliProgram({
    name: "cleanroom-tools",
    description: "Cleanroom's developer tools: the shared-cloud simulator and the endpoint audit",
    register: (program) => {
        registerSimCloudCommand(program);
        registerAuditCommand(program);
    },
    decodingCommands: []
});

#!/usr/bin/env -S npx tsx
import {Command} from "commander";
import {relaunchWithCoreThreadpool} from "../core/node/engine/relaunchWithCoreThreadpool.js";
import {registerAuditCommand} from "./commands/audit.js";
import {registerChatCommand} from "./commands/chat.js";
import {registerConversationsCommand} from "./commands/conversations.js";
import {registerModelsCommand} from "./commands/models.js";
import {registerSelfTestCommand} from "./commands/selftest.js";
import {registerSimCloudCommand} from "./commands/simCloud.js";

const program = new Command()
    .name("cleanroom")
    .description("Cleanroom: offline assistant with one isolated, verifiably scrubbed llama.cpp context per conversation")
    .showHelpAfterError();

registerChatCommand(program);
registerConversationsCommand(program);
registerSelfTestCommand(program);
registerModelsCommand(program);
registerSimCloudCommand(program);
registerAuditCommand(program);

// The commands that decode with the local model run the core in this process: they need its thread pool.
const decodingCommands = new Set(["chat", "selftest"]);
const cliArgs = process.argv.slice(2);
if (decodingCommands.has(cliArgs.find((arg) => !arg.startsWith("-")) ?? "") && !cliArgs.includes("--help") && !cliArgs.includes("-h"))
    await relaunchWithCoreThreadpool();

await program.parseAsync(process.argv);

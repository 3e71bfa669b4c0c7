#!/usr/bin/env -S npx tsx
import {Command, CommanderError} from "commander";
import {CleanroomError} from "../core/common/errors.js";
import {relaunchWithCoreThreadpool} from "../core/node/engine/relaunchWithCoreThreadpool.js";
import {registerAuditCommand} from "./commands/audit.js";
import {registerChatCommand} from "./commands/chat.js";
import {registerConversationsCommand} from "./commands/conversations.js";
import {registerModelsCommand} from "./commands/models.js";
import {registerSelfTestCommand} from "./commands/selftest.js";
import {registerSimCloudCommand} from "./commands/simCloud.js";
import {reportError} from "./output.js";

// Flags are parsed before a command knows about its --json, so a usage error looks here.
const json = process.argv.slice(2).includes("--json");

const program = new Command()
    .name("cleanroom")
    .description("Cleanroom: offline assistant with one isolated, verifiably scrubbed llama.cpp context per conversation")
    .showHelpAfterError()
    // Usage errors come back here (inherited by every subcommand) instead of ending the process,
    // so that with --json they are reported as JSON like any other error.
    .exitOverride()
    .configureOutput(json ? {outputError: () => undefined, writeErr: () => undefined} : {});

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

try {
    await program.parseAsync(process.argv);
} catch (error) {
    if (!(error instanceof CommanderError))
        reportError(error, json); // a value the core would refuse (InvalidOptionError), before any command ran
    else if (error.exitCode !== 0 && json)
        reportError(new CleanroomError("INVALID_INPUT", error.message.replace(/^error: /, ""), {usage: error.code}), true);
    else
        process.exitCode = error.exitCode; // already printed by commander; 0 after --help
}

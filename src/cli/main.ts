#!/usr/bin/env -S npx tsx
import {Command} from "commander";
import {registerChatCommand} from "./commands/chat.js";
import {registerConversationsCommand} from "./commands/conversations.js";
import {registerSelfTestCommand} from "./commands/selftest.js";

const program = new Command()
    .name("cleanroom")
    .description("Cleanroom: offline assistant with one isolated, verifiably scrubbed llama.cpp context per conversation")
    .showHelpAfterError();

registerChatCommand(program);
registerConversationsCommand(program);
registerSelfTestCommand(program);

await program.parseAsync(process.argv);

import {registerChatCommand} from "./commands/chat.js";
import {registerConversationsCommand} from "./commands/conversations.js";
import {registerEngineCommand} from "./commands/engine.js";
import {registerModelsCommand} from "./commands/models.js";
import {registerPassphraseCommand} from "./commands/passphrase.js";
import {registerSelfTestCommand} from "./commands/selftest.js";
import {registerSettingsCommand} from "./commands/settings.js";
import {registerServeCommand} from "./commands/serve.js";
import {registerWipeCommand} from "./commands/wipe.js";
import type {CliProgramOptions} from "./runCliProgram.js";

/** The `cleanroom` command: what main.ts runs, and what scripts/generateCliReference.ts documents. */
export const cleanroomProgram: CliProgramOptions = {
    name: "cleanroom",
    description: "Cleanroom: offline assistant with one isolated, verifiably scrubbed llama.cpp context per conversation",
    register: (program) => {
        registerChatCommand(program);
        registerConversationsCommand(program);
        registerSelfTestCommand(program);
        registerModelsCommand(program);
        registerPassphraseCommand(program);
        registerSettingsCommand(program);
        registerWipeCommand(program);
        registerServeCommand(program);
        registerEngineCommand(program);
    },
    decodingCommands: ["chat", "selftest", "serve"]
};

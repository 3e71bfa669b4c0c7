import path from "node:path";
import type {Llama} from "node-llama-cpp";
import {afterAll, beforeAll} from "vitest";
import {connectCoreClient, createInProcessChannelPair, type ConnectedCoreClient} from "../../src/core/common/rpc/index.js";
import {type Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {createCoreService, type CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {serveCoreOverChannel} from "../../src/core/node/rpc/serveCoreOverChannel.js";
import {openTestCore} from "./coreServices.js";
import {tempDir} from "./tempCore.js";

export type InProcessCoreClient = {
    core: Core,
    service: CoreService,
    client: ConnectedCoreClient,
    /** The temporary folder the database is in. */
    home: string,
    close(): Promise<void>
};

/**
 * A core without a model on its own database, its service, and a client talking to it over an in-process channel: the contract and the door, without generation.
 * `llama` is what the core calls for the native backend when a call loads a model. Defaults to `loadLlama`.
 */
export async function openInProcessCoreClient(name: string, llama: () => Promise<Llama> = () => loadLlama()): Promise<InProcessCoreClient> {
    const home = tempDir(name);
    // The native backend starts only if a call loads a model: most files here never do.
    const core = openTestCore(llama, {database: path.join(home, `${name}.db`)});
    const service = createCoreService(core);
    const [coreSide, clientSide, closeChannel] = createInProcessChannelPair();
    serveCoreOverChannel(service, coreSide);
    const client = connectCoreClient(clientSide);
    return {
        core, service, client, home,
        async close() {
            closeChannel();
            service.dispose();
            await core.dispose();
        }
    };
}

/** `openInProcessCoreClient` opened before the file's tests and closed after them; read its fields inside the tests. */
export function inProcessCoreClientForFile(name: string): InProcessCoreClient {
    const opened = {} as InProcessCoreClient;
    beforeAll(async () => {
        Object.assign(opened, await openInProcessCoreClient(name));
    });
    afterAll(() => opened.close());
    return opened;
}

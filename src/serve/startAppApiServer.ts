import type {Core} from "../core/node/Core.js";
import type {LocalApiServerStarter} from "../core/node/serving/LocalApiServer.js";
import {apiModelName} from "../core/node/serving/apiModelName.js";
import {ApiKeyRing} from "./ApiKeyRing.js";
import {defaultApiParallel, startApiServer} from "./startApiServer.js";

/**
 * The app's local API server (Settings → Local API server), in the core's process: `cleanroom serve`
 * on 127.0.0.1 with the keys stored in the app (none: loopback clients only, `Host` checked), on
 * whatever model the app has loaded at each request.
 */
export const startAppApiServer: LocalApiServerStarter = async (core: Core, port: number) => await startApiServer({
    core,
    modelName: () => {
        const model = core.modelInfo();
        return model == null ? null : apiModelName(model.path);
    },
    port,
    keys: new ApiKeyRing({stored: () => core.apiKeys.hashes()}),
    parallel: Math.min(defaultApiParallel, core.modelInfo()?.poolCapacity ?? defaultApiParallel),
    otherPortAdvice: "choose another port for it in Settings → Local API server (0 picks a free one)"
});

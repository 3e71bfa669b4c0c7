import type {Llama} from "node-llama-cpp";
import type {LocalTurnResult, TurnOutcome} from "../../src/core/common/types.js";
import {Core} from "../../src/core/node/Core.js";
import {createCoreServices, type CoreOptions, type CoreServices} from "../../src/core/node/createCoreServices.js";

/**
 * Tests look behind the `Core` facade (the store, the engine's pool, the database file) to check
 * what a user cannot see directly. Cores made here keep their services for `servicesOf`; no
 * front end can reach them.
 */
const servicesByCore = new WeakMap<Core, CoreServices>();

/** `Core.create`, keeping the core's services for `servicesOf`. */
export function openTestCore(llama: Llama | (() => Promise<Llama>), options: CoreOptions): Core {
    const services = createCoreServices(llama, options);
    const core = new Core(services);
    servicesByCore.set(core, services);
    return core;
}

/** The services behind a core made by `openTestCore` (or `createTestCore`). */
export function servicesOf(core: Core): CoreServices {
    const services = servicesByCore.get(core);
    if (services == null)
        throw new Error("This core was not made by openTestCore: its services are private.");
    return services;
}

/** The turn, which must have been served by the local engine. */
export function asLocalTurn(outcome: TurnOutcome): LocalTurnResult {
    if (outcome.route !== "local")
        throw new Error(`Expected a local turn, got a ${outcome.route} one (${outcome.routeReason}).`);
    return outcome;
}

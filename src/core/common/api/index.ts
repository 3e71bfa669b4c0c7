export {coreCalls, type CallDefinition, type CoreCalls} from "./calls.js";
export {coreEvents, type CoreEvents} from "./events.js";
export * from "./limits.js";
export * from "./schemas.js";
export * from "./types.js";
export * from "./engineSchemas.js";

export {createChannelBirpc, type ChannelBirpc, type ChannelBirpcOptions} from "./createChannelBirpc.js";
export {connectCoreClient, type ConnectedCoreClient} from "./connectCoreClient.js";
export type {CoreClient} from "./CoreClient.js";
export {createInProcessChannelPair} from "./createInProcessChannelPair.js";
export {RemoteCallError} from "./RemoteCallError.js";
export type {ClientSideFunctions, CoreSideFunctions, RpcChannel} from "./RpcChannel.js";
export {bridgeGlobalName, type CleanroomBridge} from "./CleanroomBridge.js";
export {electronIpcChannels} from "./electronIpcChannels.js";

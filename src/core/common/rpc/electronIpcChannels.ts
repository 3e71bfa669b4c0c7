/** The few IPC channel names between Electron main and the preload; the API itself travels over a MessagePort. */
export const electronIpcChannels = {
    /** preload → main: "give me a port to the core". */
    requestCorePort: "cleanroom:request-core-port",
    /** main → preload: a port to the core (payload `{reason: "initial" | "restarted"}`). */
    corePort: "cleanroom:core-port",
    /** main → preload: the core process died; a new port follows once it is back. */
    coreExited: "cleanroom:core-exited"
} as const;

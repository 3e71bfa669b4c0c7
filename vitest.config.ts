import {defineConfig} from "vitest/config";

export default defineConfig({
    test: {
        include: ["test/**/*.test.ts"],
        // Two cores: model-backed files would fight each other for CPU and time out.
        fileParallelism: false,
        testTimeout: 120_000,
        hookTimeout: 120_000,
        pool: "forks",
        // Processes the tests spawn start with the core's environment (coreProcessEnv), as the
        // app's own launchers give it, so none needs to relaunch itself (coreThreadpool.test.ts
        // unsets it to test the relaunch).
        env: {UV_THREADPOOL_SIZE: "1"}
    }
});

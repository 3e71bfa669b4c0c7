import {defineConfig} from "vitest/config";

export default defineConfig({
    test: {
        include: ["test/**/*.test.ts"],
        // Two cores: model-backed files would fight each other for CPU and time out.
        fileParallelism: false,
        testTimeout: 120_000,
        hookTimeout: 120_000,
        pool: "forks"
    }
});

/** Sets an environment variable for the tests of a file; the function returned puts the old value back (or removes it). */
export function setEnvForTest(name: string, value: string): () => void {
    const saved = process.env[name];
    process.env[name] = value;
    return () => {
        if (saved == null)
            delete process.env[name];
        else
            process.env[name] = saved;
    };
}

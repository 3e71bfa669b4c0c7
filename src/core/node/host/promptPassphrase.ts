import readline from "node:readline";

/** Asks for a passphrase on the terminal without echoing it; null when there is no terminal to ask on. */
export async function promptPassphrase(question: string): Promise<string | null> {
    if (process.stdin.isTTY !== true || process.stderr.isTTY !== true)
        return null;
    const output = process.stderr;
    const rl = readline.createInterface({input: process.stdin, output, terminal: true});
    // What is typed is not written back: readline's echo goes through `_writeToOutput`.
    const muted = rl as unknown as {_writeToOutput: (text: string) => void};
    let asked = false;
    muted._writeToOutput = (text: string) => {
        if (!asked)
            output.write(text);
        asked = true;
    };
    try {
        return await new Promise<string>((resolve) => rl.question(question, resolve));
    } finally {
        rl.close();
        output.write("\n");
    }
}

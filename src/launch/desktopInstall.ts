import {clearFetchFailure} from "./desktopFetchRecord.js";
import {fetchElectronBinary, findElectronBinary} from "./electronBinary.js";

/** `npm run desktop:install`: fetches the Electron binary that `npm install` leaves out. */
async function desktopInstall() {
    const installed = findElectronBinary();
    if (installed != null) {
        process.stdout.write(`The Electron binary is installed: ${installed}\n`);
        return;
    }
    const fetched = await fetchElectronBinary({showProgress: true});
    if (!fetched.ok) {
        process.stderr.write(`cleanroom: the Electron binary could not be fetched: ${fetched.reason}\n` +
            "Set ELECTRON_MIRROR to a reachable mirror, or keep using web mode (npm start falls back to it).\n");
        process.exit(1);
    }
    clearFetchFailure();
    process.stdout.write(`The Electron binary is installed: ${fetched.binary}\nRun npm start to open the desktop app.\n`);
}

await desktopInstall();

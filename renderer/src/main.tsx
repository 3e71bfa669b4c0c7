import {StrictMode} from "react";
import {createRoot} from "react-dom/client";
import {App} from "./App.js";
import {LockGate} from "./components/LockGate.js";
import {CoreQueryProvider} from "./queries/CoreQueryProvider.js";
import {connectToCore} from "./transport/connectToCore.js";
import "./styles.css";
import "./highlight.css";

const client = connectToCore();
createRoot(document.getElementById("root")!).render(
    <StrictMode>
        <LockGate client={client}>
            <CoreQueryProvider client={client}>
                <App client={client} />
            </CoreQueryProvider>
        </LockGate>
    </StrictMode>
);

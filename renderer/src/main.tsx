import {StrictMode} from "react";
import {createRoot} from "react-dom/client";
import {App} from "./App.js";
import {LockGate} from "./components/LockGate.js";
import {connectToCore} from "./transport/connectToCore.js";
import "./styles.css";
import "./highlight.css";

const client = connectToCore();
createRoot(document.getElementById("root")!).render(
    <StrictMode>
        <LockGate client={client}>
            <App client={client} />
        </LockGate>
    </StrictMode>
);

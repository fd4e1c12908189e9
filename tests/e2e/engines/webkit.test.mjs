// The browser suite in webkit (see ../lib/suite.mjs).
import { suite } from '../lib/suite.mjs';

await suite('webkit');

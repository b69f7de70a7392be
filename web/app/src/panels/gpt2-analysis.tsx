// The GPT-2 analysis under the pipeline: interventions, attribution and the logit lens,
// all of one worker run (gpt2/analysis-state.ts), which starts following the page here.
import { followAnalysis } from '../gpt2/analysis-state';
import { Attribution } from './attribution';
import { Interventions } from './interventions';
import { LogitLens } from './logit-lens';

let following = false;

export function Gpt2Analysis() {
  if (!following) {
    following = true;
    followAnalysis();
  }
  return (
    <>
      <Interventions />
      <Attribution />
      <LogitLens />
    </>
  );
}

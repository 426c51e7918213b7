declare const __POSTLANE__: { forms: Array<{ token: string; type: string }> };
console.log(__POSTLANE__.forms.length);

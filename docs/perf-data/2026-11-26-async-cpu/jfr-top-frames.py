import json,sys,collections,subprocess
f=sys.argv[1]; depth=int(sys.argv[2]) if len(sys.argv)>2 else 1
for ev in ['jdk.ExecutionSample','jdk.NativeMethodSample']:
    d=json.loads(subprocess.run(['jfr','print','--json','--events',ev,f],capture_output=True,text=True).stdout)
    per=collections.defaultdict(collections.Counter); tot=collections.Counter()
    for e in d['recording']['events']:
        v=e['values']; t=(v.get('sampledThread') or v.get('eventThread') or {}).get('javaName','?')
        fr=v['stackTrace']['frames'] if v.get('stackTrace') else []
        key=' < '.join(x['method']['type']['name'].split('.')[-1]+'.'+x['method']['name'] for x in fr[:depth])
        per[t][key]+=1; tot[t]+=1
        # also self+ancestors inclusive in our code
    print('==',ev)
    for t,n in tot.most_common(8):
        print(' %s: %d samples'%(t,n))
        for k,c in per[t].most_common(12): print('   %4d %5.1f%% %s'%(c,100*c/n,k))

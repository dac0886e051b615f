import os, sys
d = os.path.join(sys.argv[1], 'template')
os.makedirs(d)
open(os.path.join(d, 'bad.yaml'), 'w').write('base: []\nconfig:\n  target:\n    service: volcano\n    gpus_per_node: 1\n    cpus_per_node: 2\n    memory: 4Gi\n  environment:\n    image: \n  jobs:\n    - name: train\n      sku: G1\n      instance_count: 1\n'.replace('image: ', 'image: ' + 'b' * 1000000))
